import CohortCore
package import Foundation

/// The Health app's "Export All Health Data": the zip, its unpacked folder, or `export.xml`
/// alone. Finds `export.xml`, streams it without unpacking anything to disk, and counts the
/// files that are never imported (workout routes, ECGs, clinical records, the CDA document).
package struct AppleHealthExport {
    /// Where export.xml is.
    enum Location {
        case zip(path: String, entry: ZipArchive.Entry)
        case file(path: String)
    }

    let location: Location
    /// The path of the input as given (the zip, folder or XML file).
    package let inputPath: String
    /// The file whose SHA-256 identifies this import (the zip, or export.xml).
    package let identifyingFile: String
    /// How export.xml is named in errors (`export.zip!apple_health_export/export.xml`).
    package let xmlName: String
    /// Files of the export that are not imported, by category (`workout-routes/*.gpx`: 3).
    package let skippedFiles: [String: Int]

    /// Opens the export at `url`.
    package init(url: URL) throws {
        let path = url.path
        inputPath = path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw CohortError(.notFound, "cannot find the Apple Health export", at: .init(file: path), hint: "pass export.zip, its unpacked folder or export.xml")
        }
        if isDirectory.boolValue {
            var xml: String?
            var others: [String] = []
            let root = url.standardizedFileURL.path
            if let walker = FileManager.default.enumerator(atPath: root) {
                while let relative = walker.nextObject() as? String {
                    var sub: ObjCBool = false
                    guard FileManager.default.fileExists(atPath: root + "/" + relative, isDirectory: &sub), !sub.boolValue else { continue }
                    if (relative as NSString).lastPathComponent == "export.xml" {
                        guard xml == nil else {
                            throw CohortError.invalid("the folder holds more than one export.xml", file: path, hint: "import one export at a time")
                        }
                        xml = root + "/" + relative
                    } else {
                        others.append(relative)
                    }
                }
            }
            guard let xml else {
                throw CohortError.invalid("the folder holds no export.xml", file: path, hint: "pass the folder the Health app's export.zip unpacks to")
            }
            location = .file(path: xml)
            identifyingFile = xml
            xmlName = xml
            skippedFiles = Self.categorize(others)
        } else if Self.isZip(path) {
            let archive = try ZipArchive(path: path)
            let xmlEntries = archive.entries.filter { !$0.isDirectory && ($0.path as NSString).lastPathComponent == "export.xml" }
            guard xmlEntries.count == 1, let entry = xmlEntries.first else {
                throw CohortError.invalid(
                    xmlEntries.isEmpty ? "the zip archive holds no export.xml" : "the zip archive holds more than one export.xml", file: path,
                    hint: "pass the Health app's export.zip (\"Export All Health Data\")")
            }
            location = .zip(path: path, entry: entry)
            identifyingFile = path
            xmlName = "\(path)!\(entry.path)"
            skippedFiles = Self.categorize(archive.entries.filter { !$0.isDirectory && $0 != entry }.map(\.path))
        } else {
            location = .file(path: path)
            identifyingFile = path
            xmlName = path
            skippedFiles = [:]
        }
    }

    /// Whether the file starts with a zip local header.
    static func isZip(_ path: String) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        let head = (try? handle.read(upToCount: 4)) ?? Data()
        return head == Data([0x50, 0x4B, 0x03, 0x04]) || head == Data([0x50, 0x4B, 0x05, 0x06])
    }

    /// Whether `url` looks like an Apple Health export (a zip or folder with export.xml, or an
    /// XML file whose root is `HealthData`), read from its first bytes only.
    package static func looksLikeExport(_ url: URL) -> Bool {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else { return false }
        if isDirectory.boolValue {
            return FileManager.default.fileExists(atPath: url.appendingPathComponent("export.xml").path)
                || FileManager.default.fileExists(atPath: url.appendingPathComponent("apple_health_export/export.xml").path)
        }
        if isZip(url.path) {
            return (try? ZipArchive(path: url.path))?.entries.contains { ($0.path as NSString).lastPathComponent == "export.xml" } ?? false
        }
        guard let handle = FileHandle(forReadingAtPath: url.path) else { return false }
        defer { try? handle.close() }
        return rootIsHealthData(Array((try? handle.read(upToCount: 64 << 10)) ?? Data()))
    }

    /// Whether the XML document starting with `head` has the root element `HealthData`: after an
    /// optional UTF-8 byte-order mark, white space, the `<?xml …?>` declaration (optional: older
    /// exports and hand-cut files lack it), comments and a `<!DOCTYPE HealthData …>` (Apple's
    /// internal DTD, skipped whole), the first element is `<HealthData`. A CSV or JSON file never
    /// passes; the DTD is not parsed, only skipped to its end.
    static func rootIsHealthData(_ head: [UInt8]) -> Bool {
        var i = 0
        if head.starts(with: [0xEF, 0xBB, 0xBF]) { i = 3 }
        func starts(_ text: String) -> Bool { head[i...].starts(with: Array(text.utf8)) }
        func skip(past end: String) -> Bool {
            let marker = Array(end.utf8)
            var j = i
            while j + marker.count <= head.count {
                if head[j..<(j + marker.count)].elementsEqual(marker) {
                    i = j + marker.count
                    return true
                }
                j += 1
            }
            return false
        }
        while i < head.count {
            let c = head[i]
            if c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D {
                i += 1
            } else if starts("<?") {
                guard skip(past: "?>") else { return false }
            } else if starts("<!--") {
                guard skip(past: "-->") else { return false }
            } else if starts("<!DOCTYPE") {
                // `<!DOCTYPE HealthData [ … ]>` or `<!DOCTYPE HealthData>`: the name decides.
                var j = i + 9
                while j < head.count, head[j] == 0x20 || head[j] == 0x09 || head[j] == 0x0A || head[j] == 0x0D { j += 1 }
                guard head[j...].starts(with: Array("HealthData".utf8)) else { return false }
                return true
            } else {
                guard starts("<HealthData"), i + 11 < head.count else { return false }
                let after = head[i + 11]
                return after == 0x20 || after == 0x09 || after == 0x0A || after == 0x0D || after == UInt8(ascii: ">") || after == UInt8(ascii: "/")
            }
        }
        return false
    }

    /// Counts files by what they are.
    static func categorize(_ paths: [String]) -> [String: Int] {
        var counts: [String: Int] = [:]
        for path in paths {
            let parts = path.split(separator: "/").map(String.init)
            let file = parts.last ?? path
            let category: String
            if parts.contains("workout-routes") {
                category = "workout-routes/*.gpx (GPS, not imported)"
            } else if parts.contains("electrocardiograms") {
                category = "electrocardiograms/*.csv (ECG, not imported)"
            } else if parts.contains("clinical-records") {
                category = "clinical-records/*.json (not imported)"
            } else if file == "export_cda.xml" {
                category = "export_cda.xml (not imported)"
            } else {
                category = "other files (not imported)"
            }
            counts[category, default: 0] += 1
        }
        return counts
    }

    /// Streams export.xml's bytes to `body` in chunks.
    package func streamXML(_ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        switch location {
        case let .zip(path, entry):
            try ZipArchive(path: path).read(entry, body)
        case let .file(path):
            let fd = open(path, O_RDONLY)
            guard fd >= 0 else { throw CohortError(.notFound, "cannot open export.xml", at: .init(file: path)) }
            defer { close(fd) }
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
            defer { buffer.deallocate() }
            while true {
                let n = read(fd, buffer.baseAddress, buffer.count)
                guard n >= 0 else { throw CohortError(.system, "cannot read export.xml", at: .init(file: path)) }
                if n == 0 { break }
                try body(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
            }
        }
    }
}
