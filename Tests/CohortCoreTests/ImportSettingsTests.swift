import Foundation
import Testing

@testable import CohortCore

/// The protocol's `import:` section: the Apple Health metadata keys it keeps.
struct ImportSettingsTests {
    /// The fixture (39 lines) with `import.apple_health.keep_metadata` listing `keys` from line 43 on.
    static func text(keeping keys: [String]) -> String {
        ProtocolFixture.text() + (["import:", "  apple_health:", "    keep_metadata:"] + keys.map { "      - \"\($0)\"" }).joined(separator: "\n") + "\n"
    }

    @Test func keptKeysLoadAndSurviveTheWrittenProtocol() throws {
        let loaded = try ProtocolLoader.parse(
            Self.text(keeping: ["HKMetadataKeyHeartRateMotionContext", "HKIndoorWorkout"]), file: "test.yaml", templateRoot: nil)
        let settings = loaded.studyProtocol.importSettings
        #expect(settings.appleHealthKeepMetadata == ["HKMetadataKeyHeartRateMotionContext", "HKIndoorWorkout"])
        #expect(!settings.isEmpty)
        // Written as JSON (as the store pins it) and read back, by the decoder and by the loader.
        let json = try JSONEncoder().encode(loaded.studyProtocol)
        #expect(try JSONDecoder().decode(StudyProtocol.self, from: json).importSettings == settings)
        let reloaded = try ProtocolLoader.parse(String(decoding: json, as: UTF8.self), file: "test.json", templateRoot: nil)
        #expect(reloaded.studyProtocol.importSettings == settings)
        // A protocol pinned before the rule existed has no such key and keeps nothing.
        let old = try JSONDecoder().decode(ImportSettings.self, from: Data(#"{"code_map":[]}"#.utf8))
        #expect(old.appleHealthKeepMetadata.isEmpty && old.isEmpty)
    }

    @Test(arguments: [
        "Withings User Identifier", "HKMetadataKeyExternalUUID", "HKMetadataKeySyncIdentifier", "HKMetadataKeyDeviceSerialNumber",
        "HKMetadataKeyDeviceName", "HKMetadataKeyTimeZone", "HKExternalUUID", "Garmin Account Id",
    ])
    func keysThatMayIdentifyAreRefusedNamingFileLineAndField(key: String) {
        let problems = ProtocolFixture.problems(Self.text(keeping: ["HKMetadataKeyWasUserEntered", key]))
        let errors = problems.errors(at: "import.apple_health.keep_metadata[1]")
        #expect(errors.count == 1)
        #expect(errors.first?.file == "test.yaml")
        #expect(errors.first?.line == 44)
        #expect(errors.first?.message.contains("may identify the participant") == true)
        #expect(errors.first?.hint?.contains("HKMetadataKeyHeartRateMotionContext") == true)
        // The allowed key beside it is not an error.
        #expect(problems.errors(at: "import.apple_health.keep_metadata[0]").isEmpty)
    }

    @Test func unknownKeysAndRepeatsAreRefused() {
        let problems = ProtocolFixture.problems(
            Self.text(keeping: ["HKMetadataKeyMadeUpByAVendor", "HKMetadataKeyWasUserEntered", "HKMetadataKeyWasUserEntered"]))
        #expect(problems.errors(at: "import.apple_health.keep_metadata[0]").first?.message.contains("not one cohort knows") == true)
        #expect(problems.errors(at: "import.apple_health.keep_metadata[0]").first?.line == 43)
        #expect(problems.errors(at: "import.apple_health.keep_metadata[1]").isEmpty)
        #expect(problems.errors(at: "import.apple_health.keep_metadata[2]").first?.message.contains("listed twice") == true)
    }

    @Test func everyKeepableKeyIsAcceptedAndNoIdentifyingKeyIs() {
        #expect(HealthKitMetadata.keepable.allSatisfy { HealthKitMetadata.refusal($0) == nil })
        #expect(HealthKitMetadata.identifying.allSatisfy { HealthKitMetadata.refusal($0) != nil })
        #expect(HealthKitMetadata.keepable.isDisjoint(with: HealthKitMetadata.identifying))
    }
}
