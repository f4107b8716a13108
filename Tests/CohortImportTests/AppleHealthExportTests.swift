import CohortCore
@testable import CohortImport
import Foundation
import Testing

struct AppleHealthExportTests {
    static func tempDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("ahexport-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    static let others = [
        "apple_health_export/export_cda.xml", "apple_health_export/workout-routes/route_2026-10-05_6.00pm.gpx",
        "apple_health_export/workout-routes/route_2026-10-06_7.00am.gpx", "apple_health_export/electrocardiograms/ecg_2026-10-02.csv",
        "apple_health_export/clinical-records/Observation-1.json",
    ]
    static let expectedSkipped = [
        "export_cda.xml (not imported)": 1, "workout-routes/*.gpx (GPS, not imported)": 2, "electrocardiograms/*.csv (ECG, not imported)": 1,
        "clinical-records/*.json (not imported)": 1,
    ]

    static func xmlBytes(_ export: AppleHealthExport) throws -> [UInt8] {
        var out: [UInt8] = []
        try export.streamXML { out += $0 }
        return out
    }

    @Test(arguments: [false, true])
    func zipIsReadInPlaceAndOtherFilesCounted(zip64: Bool) throws {
        let dir = try Self.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let xml = Array(try Data(contentsOf: AppleHealthFixture.exportXML))
        let members = [ZipFixture.Member(path: "apple_health_export/export.xml", bytes: xml)]
            + Self.others.map { ZipFixture.Member(path: $0, bytes: Array("gps or ecg".utf8)) }
        let zip = dir.appendingPathComponent("export.zip")
        try Data(ZipFixture.make(members, zip64: zip64)).write(to: zip)
        #expect(AppleHealthExport.looksLikeExport(zip))
        let export = try AppleHealthExport(url: zip)
        #expect(export.skippedFiles == Self.expectedSkipped)
        #expect(export.xmlName == zip.path + "!apple_health_export/export.xml")
        #expect(try Self.xmlBytes(export) == xml)
        // Nothing was unpacked next to the zip.
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["export.zip"])
    }

    @Test func unpackedFolderWorksLikeTheZip() throws {
        let dir = try Self.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        for path in Self.others {
            let url = dir.appendingPathComponent(path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data("x".utf8).write(to: url)
        }
        try FileManager.default.copyItem(at: AppleHealthFixture.exportXML, to: dir.appendingPathComponent("apple_health_export/export.xml"))
        #expect(AppleHealthExport.looksLikeExport(dir))
        let export = try AppleHealthExport(url: dir)
        #expect(export.skippedFiles == Self.expectedSkipped)
        #expect(try Self.xmlBytes(export) == Array(try Data(contentsOf: AppleHealthFixture.exportXML)))
    }

    /// A plain export.xml is recognized by its `HealthData` root, with or without the XML
    /// declaration, after a byte-order mark, a comment or Apple's DOCTYPE; files that are not one
    /// are not.
    @Test(arguments: [
        ("<HealthData locale=\"en_US\">\n <ExportDate value=\"2019-07-19 10:36:11 -0700\"/>\n</HealthData>\n", true),
        ("\u{FEFF}<HealthData locale=\"en_US\">\n</HealthData>\n", true),
        ("\u{FEFF}<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<HealthData>\n</HealthData>\n", true),
        ("\n  <!-- cut by hand -->\n<HealthData>\n</HealthData>\n", true),
        ("<?xml version=\"1.0\"?>\n<!DOCTYPE HealthData [\n<!ELEMENT HealthData ANY>\n]>\n<HealthData/>\n", true),
        ("<?xml version=\"1.0\"?>\n<feed><HealthData/></feed>\n", false),
        ("<HealthDataX/>\n", false),
        ("participant,kind,start\nP-1,steps,\"<HealthData>\"\n", false),
        ("{\"resourceType\":\"Bundle\",\"note\":\"<HealthData>\"}\n", false),
    ])
    func plainExportXMLIsRecognizedByItsRoot(text: String, isExport: Bool) throws {
        let dir = try Self.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("export.xml")
        try Data(text.utf8).write(to: file)
        #expect(AppleHealthExport.looksLikeExport(file) == isExport)
    }

    /// The parser reads what the sniffer accepts: no declaration, or a byte-order mark first.
    @Test(arguments: ["", "\u{FEFF}"])
    func exportWithoutDeclarationOrWithBOMIsRead(prefix: String) throws {
        let text = prefix + AppleHealthReaderTests.olderExport
        let read = try AppleHealthReaderTests.read(Array(text.utf8))
        #expect(read.samples.map(\.kind) == [.bmi, .workout])
    }

    @Test func sniffingTellsExportsFromRecordFiles() throws {
        let dir = try Self.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        #expect(AppleHealthExport.looksLikeExport(AppleHealthFixture.exportXML))
        let csv = dir.appendingPathComponent("records.csv")
        try Data("participant,kind,start\n".utf8).write(to: csv)
        #expect(!AppleHealthExport.looksLikeExport(csv))
        let zip = dir.appendingPathComponent("other.zip")
        try Data(ZipFixture.make([.init(path: "notes.txt", bytes: Array("hi".utf8))])).write(to: zip)
        #expect(!AppleHealthExport.looksLikeExport(zip))
        let error = try #require(throws: CohortError.self) { _ = try AppleHealthExport(url: zip) }
        #expect(error.message.contains("no export.xml"))
    }
}
