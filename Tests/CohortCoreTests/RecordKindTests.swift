import Testing

@testable import CohortCore

struct RecordKindTests {
    @Test(arguments: [
        (RecordKind.heartRate, "8867-4", "/min"),
        (.restingHeartRate, "40443-4", "/min"),
        (.hrvSDNN, "80404-7", "ms"),
        (.sleepDuration, "93832-4", "h"),
        (.spo2, "59408-5", "%"),
        (.respiratoryRate, "9279-1", "/min"),
        (.bodyMass, "29463-7", "kg"),
        (.pain, "72514-3", "{score}"),
    ])
    func loincCodesFollowTheDesign(kind: RecordKind, code: String, unit: String) {
        #expect(kind.coding.system == Coding.loincSystem)
        #expect(kind.coding.code == code)
        #expect(kind.canonicalUnit == unit)
    }

    @Test func stepsUseAStepsLOINCCode() {
        #expect(RecordKind.steps.coding.system == Coding.loincSystem)
        #expect(["55423-8", "41950-7"].contains(RecordKind.steps.coding.code))
    }

    /// LOINC codes end in a mod-10 (Luhn) check digit: a typo in a code fails here.
    @Test(arguments: RecordKind.allCases.filter { $0.coding.system == Coding.loincSystem })
    func loincCheckDigitIsValid(kind: RecordKind) throws {
        let parts = kind.coding.code.split(separator: "-")
        try #require(parts.count == 2)
        let digits = parts[0].compactMap(\.wholeNumberValue)
        var sum = 0
        for (position, digit) in digits.reversed().enumerated() {
            let value = position % 2 == 0 ? digit * 2 : digit
            sum += value / 10 + value % 10
        }
        #expect(String((10 - sum % 10) % 10) == String(parts[1]))
    }

    @Test(arguments: RecordKind.allCases)
    func everyKindIsDescribed(kind: RecordKind) {
        #expect(!kind.coding.code.isEmpty)
        #expect(!kind.coding.display.isEmpty)
        #expect(!kind.coding.system.isEmpty)
        if kind.coding.system == Coding.localSystem { #expect(kind.coding.code == kind.rawValue) }
        #expect(!kind.canonicalUnit.isEmpty)
        #expect(!kind.summary.isEmpty)
        #expect(kind.range.lowerBound < kind.range.upperBound)
        #expect(kind.range.lowerBound.isFinite && kind.range.upperBound.isFinite)
        if kind.isInteger { #expect(kind.range.lowerBound.rounded() == kind.range.lowerBound) }
        #expect(kind.dataType.kinds.contains(kind))
    }

    @Test func codesAreUnique() {
        let codes = RecordKind.allCases.map { "\($0.coding.system)|\($0.coding.code)" }
        #expect(Set(codes).count == codes.count)
    }

    @Test func dataTypesPartitionTheKinds() {
        let all = DataType.allCases.flatMap(\.kinds)
        #expect(all.count == RecordKind.allCases.count)
        #expect(Set(all) == Set(RecordKind.allCases))
        #expect(DataType.allCases.allSatisfy { !$0.kinds.isEmpty && !$0.tableName.isEmpty })
        #expect(Set(DataType.allCases.map(\.tableName)).count == DataType.allCases.count)
    }

    @Test func plausibleRangesRejectImplausibleValues() {
        #expect(RecordKind.heartRate.range.contains(62))
        #expect(!RecordKind.heartRate.range.contains(0))
        #expect(!RecordKind.spo2.range.contains(101))
        #expect(!RecordKind.pain.range.contains(11))
        #expect(RecordKind.pain.range.contains(0))
        #expect(!RecordKind.bodyMass.range.contains(1000))
    }

    @Test func valueRequirements() {
        #expect(RecordKind.medicationDose.requiresText)
        #expect(!RecordKind.medicationDose.requiresValue)
        #expect(!RecordKind.flare.requiresValue)
        #expect(RecordKind.steps.requiresValue && RecordKind.steps.isInteger)
        #expect(RecordKind.migraineAttack.textVocabulary?.contains("weather") == true)
        #expect(RecordKind.pain.textVocabulary == nil)
    }
}

/// ``RecordKind`` and ``DataType`` hash their case's index (``CaseHash``), not their raw string:
/// the index is the case's place in `allCases` for every case, so equal cases hash alike and
/// different cases differently, and a set or dictionary of kinds finds what it holds.
struct KindHashingTests {
    @Test func theCaseIndexIsTheIndexInAllCases() {
        for (index, kind) in RecordKind.allCases.enumerated() {
            #expect(CaseHash.index(of: kind) == index, "\(kind)")
            #expect(kind.caseIndex == index, "\(kind)")
        }
        for (index, type) in DataType.allCases.enumerated() {
            #expect(CaseHash.index(of: type) == index, "\(type)")
            #expect(type.caseIndex == index, "\(type)")
        }
    }

    @Test func setsAndDictionariesHashTheCase() {
        for (index, kind) in RecordKind.allCases.enumerated() {
            var byCase = Hasher()
            byCase.combine(index)
            var byKind = Hasher()
            byKind.combine(kind)
            #expect(byKind.finalize() == byCase.finalize(), "\(kind)")
            #expect(kind._rawHashValue(seed: 7) == index._rawHashValue(seed: 7), "\(kind)")
        }
        for (index, type) in DataType.allCases.enumerated() {
            #expect(type._rawHashValue(seed: 7) == index._rawHashValue(seed: 7), "\(type)")
        }
        let kinds = Set(RecordKind.allCases)
        #expect(kinds.count == RecordKind.allCases.count)
        #expect(RecordKind.allCases.allSatisfy { kinds.contains($0) })
        let byType = Dictionary(uniqueKeysWithValues: DataType.allCases.map { ($0, $0.rawValue) })
        #expect(DataType.allCases.allSatisfy { byType[$0] == $0.rawValue })
    }
}
