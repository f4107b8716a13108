/// The BagIt checks over a scanned archive: declaration, payload manifest, tag manifest, oxum.
enum BagChecks {
    static func run(_ scan: ArchiveScan) -> [VerificationCheck] {
        [declaration(scan), payloadManifest(scan), tagManifest(scan), oxum(scan)]
    }

    private static func fail(_ name: String, _ detail: String) -> VerificationCheck {
        VerificationCheck(name: name, passed: false, detail: detail)
    }

    private static func text(_ scan: ArchiveScan, _ name: String) -> String? {
        scan.tagContents[name].map { String(decoding: $0, as: UTF8.self) }
    }

    static func declaration(_ scan: ArchiveScan) -> VerificationCheck {
        let name = VerificationCheck.bagDeclaration
        guard let text = text(scan, "bagit.txt") else { return fail(name, "bagit.txt missing") }
        let lines = text.split(whereSeparator: \.isNewline).map(String.init)
        guard let version = lines.first(where: { $0.hasPrefix("BagIt-Version: ") }) else {
            return fail(name, "bagit.txt has no BagIt-Version")
        }
        guard lines.contains("Tag-File-Character-Encoding: UTF-8") else {
            return fail(name, "bagit.txt does not declare UTF-8 tag files")
        }
        return VerificationCheck(name: name, passed: true, detail: String(version.dropFirst("BagIt-Version: ".count)).trimmingSpaces)
    }

    static func payloadManifest(_ scan: ArchiveScan) -> VerificationCheck {
        let name = VerificationCheck.bagManifest
        guard let text = text(scan, "manifest-sha256.txt") else { return fail(name, "manifest-sha256.txt missing") }
        let (entries, badLines) = BagPath.parseManifest(text)
        var problems = badLines.map { "manifest-sha256.txt line \($0) is malformed" }
        var listed = Set<String>()
        for entry in entries {
            let quoted = ArchiveScan.quote(entry.path)
            guard listed.insert(entry.path).inserted else {
                problems.append("\(quoted) listed twice")
                continue
            }
            guard entry.path.hasPrefix("data/") else {
                problems.append("\(quoted) is not a payload path")
                continue
            }
            guard let member = scan.files[entry.path] else {
                problems.append("\(quoted) missing from the bag")
                continue
            }
            if member.sha256 != entry.sha256 { problems.append("\(quoted) digest expected \(entry.sha256) got \(member.sha256)") }
        }
        let extra = scan.files.keys.filter { $0.hasPrefix("data/") && !listed.contains($0) }.sorted()
        problems += extra.map { "\(ArchiveScan.quote($0)) is not in manifest-sha256.txt" }
        return problems.isEmpty
            ? VerificationCheck(name: name, passed: true, detail: "\(entries.count) payload files match manifest-sha256.txt")
            : fail(name, Verifier.summarize(problems))
    }

    static func tagManifest(_ scan: ArchiveScan) -> VerificationCheck {
        let name = VerificationCheck.tagManifest
        guard let text = text(scan, "tagmanifest-sha256.txt") else { return fail(name, "tagmanifest-sha256.txt missing") }
        let (entries, badLines) = BagPath.parseManifest(text)
        var problems = badLines.map { "tagmanifest-sha256.txt line \($0) is malformed" }
        for entry in entries {
            let quoted = ArchiveScan.quote(entry.path)
            guard let member = scan.files[entry.path] else {
                problems.append("\(quoted) missing from the bag")
                continue
            }
            if member.sha256 != entry.sha256 { problems.append("\(quoted) digest expected \(entry.sha256) got \(member.sha256)") }
        }
        return problems.isEmpty
            ? VerificationCheck(name: name, passed: true, detail: "\(entries.count) tag files match tagmanifest-sha256.txt")
            : fail(name, Verifier.summarize(problems))
    }

    static func oxum(_ scan: ArchiveScan) -> VerificationCheck {
        let name = VerificationCheck.payloadOxum
        guard let text = text(scan, "bag-info.txt") else { return fail(name, "bag-info.txt missing") }
        let prefix = "Payload-Oxum:"
        guard let line = text.split(whereSeparator: \.isNewline).first(where: { $0.hasPrefix(prefix) }) else {
            return fail(name, "bag-info.txt has no Payload-Oxum")
        }
        let declared = String(line.dropFirst(prefix.count)).trimmingSpaces
        let payload = scan.files.filter { $0.key.hasPrefix("data/") }
        let actual = "\(payload.values.reduce(UInt64(0)) { $0 + $1.size }).\(payload.count)"
        return declared == actual
            ? VerificationCheck(name: name, passed: true, detail: actual)
            : fail(name, "expected \(declared) got \(actual)")
    }
}

extension String {
    /// Without leading and trailing spaces and tabs.
    var trimmingSpaces: String {
        String(drop(while: { $0 == " " || $0 == "\t" }).reversed().drop(while: { $0 == " " || $0 == "\t" }).reversed())
    }
}
