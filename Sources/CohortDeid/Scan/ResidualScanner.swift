package import CohortCore
import CohortCrypto
public import Foundation
import CohortIO

/// Scans the values that came from participants in output files for any identifier of any
/// participant on the roster, after writing and before publishing; cohort's own fixed text is
/// not scanned.
///
/// What is scanned (see docs/deidentification.md, "Residual-PII scan"):
/// - `.csv`: every cell of every data row (RFC 4180 quoting, line breaks inside quotes); the
///   header row names the field of a finding.
/// - `.ndjson`/`.jsonl` (one value per line) and `.json`: every string value, named by its key
///   path (`note.text`); keys, numbers and the fixed vocabulary fields (``fixedJSONKeys``, and
///   `display` inside a `coding`) are not.
/// - any other file: every line as a whole.
/// - A directory scan skips the files cohort writes itself (``isFixedText(_:)``): codebook,
///   datapackage.json, README.txt, study.json, the FHIR bulk manifest, the reports, BagIt tag
///   files.
///
/// What is an identifier (values compared case- and accent-folded, see ``TextTokenizer``): a
/// participant's full name, first and last name together (either order), any name word of 3+
/// letters alone unless it is ordinary or clinical vocabulary (``ClinicalVocabulary``) — such a
/// word only after a title (`Mr Field`) or as a capitalized possessive (`Field's`); emails;
/// phone numbers as digit runs with any separators (7–10 digits equal to a roster phone's last
/// 7–10, or 11–15 ending in its last 10; a CSV cell of a column that is not free text holding
/// only a number of fewer than 10 digits is a quantity, see ``isShortQuantity(_:)``); birth dates written numerically or with month names
/// (ordinals too); MRNs with or without their prefix; study codes; the street line of addresses;
/// device names that carry a name or a serial number. Typed tokens such as `[NAME]` do not match.
///
/// Findings name file, line, field and kind, never the value, and carry the value's SHA-256 for
/// reviewed exceptions. Plain ASCII values are matched on their bytes; every word costs one hash
/// probe, so the cost per byte does not grow with the roster; a value whose words all start with a
/// digit (a timestamp, a number) skips the words when no roster phrase can be among them
/// (``DigitWordPhrases``). NDJSON and text files are cut at line ends into pieces of a few
/// megabytes, CSV and JSON files are scanned whole; pieces run on `threads` threads and findings
/// come back in path and line order whatever the thread count.
public struct ResidualScanner: Sendable {
    let index: IdentifierIndex
    /// The index's phrases that values of digit-led words could hold (``digitWordMask(_:freeText:_:)``).
    let digitWordPhrases: DigitWordPhrases
    /// The scrubber's allow-list, applied to free-text fields; nil when the word lists are not
    /// installed, and then every word of free text is a finding (the scan fails closed).
    private(set) var vocabulary: SafeVocabulary?
    /// How many roster participants' identifiers it looks for.
    public let participants: Int
    /// How many threads ``scan(files:)`` and ``scan(directory:)`` use.
    public let threads: Int
    /// Files are cut into pieces of about this many bytes (at line ends) for the threads.
    let pieceSize: Int
    private static let markers: [[UInt32]] = ScrubToken.allCases.map { $0.rawValue.unicodeScalars.map(\.value) }

    /// A scanner for the identifiers of everyone on `roster`, scanning on up to two threads.
    package init(roster: [Participant]) {
        self.init(roster: roster, threads: min(2, Cores.available))
    }

    /// A scanner for the identifiers of everyone on `roster`, scanning on `threads` threads
    /// (at least one); the findings do not depend on the thread count.
    package init(roster: [Participant], threads: Int) {
        self.init(roster: roster, threads: threads, pieceSize: 4 << 20)
    }

    init(roster: [Participant], threads: Int, pieceSize: Int) {
        self.init(identifiers: RosterIdentifiers(for: .scanner, roster: roster), threads: threads, pieceSize: pieceSize)
    }

    /// A scanner for the identifiers collected in `identifiers` (for `.scanner`), on up to two
    /// threads.
    package init(identifiers: consuming RosterIdentifiers) {
        self.init(identifiers: identifiers, threads: min(2, Cores.available), pieceSize: 4 << 20)
    }

    init(identifiers: consuming RosterIdentifiers, threads: Int, pieceSize: Int) {
        participants = identifiers.count
        index = identifiers.compiled(for: .scanner)
        digitWordPhrases = DigitWordPhrases(index.lookup)
        vocabulary = try? SafeVocabulary.system()
        self.threads = max(1, threads)
        self.pieceSize = max(1, pieceSize)
    }

    /// This scanner, also taking `words` (the protocol's kinds, units, medication names) as safe
    /// in free text, as the scrubber does (``Scrubber/keeping(_:)``).
    package func keeping(_ words: some Sequence<String>) -> ResidualScanner {
        var copy = self
        copy.vocabulary = vocabulary?.adding(words)
        return copy
    }

    /// CSV columns holding free text (the records' `text` and `note`).
    package static let freeTextColumns: Set<String> = ["text", "note"]

    /// Whether a JSON value at `keyPath` is free text: a record's `text` or `note`, a FHIR
    /// annotation (`note.text`), `valueString`, or a medication's `medicationCodeableConcept.text`.
    package static func isFreeTextJSONPath(_ keyPath: String) -> Bool {
        freeTextJSONPaths.contains(keyPath) || freeTextJSONPathSuffixes.contains { keyPath.hasSuffix($0) }
    }

    /// The JSON key paths that are free text as a whole, and the endings that make one free
    /// text: the one list both ``isFreeTextJSONPath(_:)`` and the byte scanner's ASCII path read.
    static let freeTextJSONPaths = ["text", "note"]
    static let freeTextJSONPathSuffixes = ["note.text", "valueString", "medicationCodeableConcept.text", ".note"]

    /// Scans `files`; paths in findings are the files' paths as given.
    public func scan(files: [URL]) throws -> [ResidualFinding] {
        try scan(files.map { ($0.path, $0) }).findings
    }

    /// Scans `files` with counts (paths in findings as given).
    package func scanResult(files: [URL]) throws -> ResidualScanResult {
        let counts = try scan(files.map { ($0.path, $0) })
        return ResidualScanResult(
            filesScanned: files.count, findings: counts.findings, freeTextValues: counts.freeTextValues, valuesScanned: counts.values)
    }

    /// Scans every regular file under `directory` (recursively, in path order); paths in findings
    /// are relative to `directory`.
    public func scan(directory: URL) throws -> ResidualScanResult {
        try scan(directory: directory, written: nil)
    }

    /// Scans every regular file under `directory` as ``scan(directory:)`` does, taking the result
    /// of each file `written` scanned as it was written (``WrittenFileScan``) when the file on disk
    /// is still the version its writer closed, and reading the others: the same result as a scan
    /// of the directory alone, with ``ResidualScanResult/filesScannedAsWritten`` saying how many
    /// files were not read back. Files `written` scanned with no copy on disk
    /// (``WrittenFileScan/tapOnlyResult(for:)``) are scanned files of `directory` too.
    package func scan(directory: URL, written: WrittenFileScan?) throws -> ResidualScanResult {
        let root = directory.standardizedFileURL.resolvingSymlinksInPath()
        guard
            let enumerator = FileManager.default.enumerator(
                at: root, includingPropertiesForKeys: [.isRegularFileKey], options: [], errorHandler: nil)
        else {
            throw CohortError(.notFound, "the directory to scan cannot be read", at: .init(file: directory.path))
        }
        var files: [(relative: String, url: URL)] = []
        let rootPath = root.path.hasSuffix("/") ? root.path : root.path + "/"
        for case let url as URL in enumerator {
            let values = try? url.resourceValues(forKeys: [.isRegularFileKey])
            guard values?.isRegularFile == true else { continue }
            let path = url.standardizedFileURL.resolvingSymlinksInPath().path
            let relative = path.hasPrefix(rootPath) ? String(path.dropFirst(rootPath.count)) : path
            files.append((relative, url))
        }
        // Files written to the scan's taps alone have no copy on disk: their results are all there is.
        let onDisk = Set(files.map(\.relative))
        for relative in written?.tapOnlyPaths ?? [] {
            guard !onDisk.contains(relative) else {
                throw CohortError(.integrity, "a payload file written without a copy on disk is also on disk", at: .init(file: relative))
            }
            files.append((relative, root.appendingPathComponent(relative)))
        }
        files.sort { $0.relative < $1.relative }
        let skipped = files.filter { Self.isFixedText($0.relative) }.map(\.relative)
        files.removeAll { Self.isFixedText($0.relative) }
        let counts = try scan(files.map { ($0.relative, $0.url) }, written: written)
        var result = ResidualScanResult(
            filesScanned: files.count, filesSkipped: skipped, findings: counts.findings, freeTextValues: counts.freeTextValues,
            valuesScanned: counts.values)
        result.filesScannedAsWritten = counts.asWritten
        return result
    }

    /// File names cohort writes itself from fixed text, the protocol and counts (no participant
    /// value): a directory scan skips them.
    package static let fixedTextFiles: Set<String> = [
        "codebook.csv", "datapackage.json", "README.txt", "study.json", "manifest.json", "bagit.txt", "bag-info.txt",
        "manifest-sha256.txt", "tagmanifest-sha256.txt",
    ]

    /// JSON keys whose string values are fixed vocabulary (resource types, code systems, codes,
    /// UCUM units, statuses, ids and references cohort makes), not participant values; `display`
    /// is fixed only inside a `coding` (LOINC and HL7 displays), elsewhere (`device.display`) it
    /// carries a record's source.
    package static let fixedJSONKeys: Set<String> = [
        "resourceType", "system", "code", "unit", "status", "id", "fullUrl", "reference", "url", "uri", "kind", "type",
    ]

    /// Whether the file at `relativePath` is one of cohort's own fixed-text files: a name in
    /// ``fixedTextFiles``, a BagIt `manifest-*.txt`/`tagmanifest-*.txt`, or anything under a
    /// `reports` folder.
    package static func isFixedText(_ relativePath: String) -> Bool {
        let parts = relativePath.split(separator: "/")
        guard let name = parts.last else { return false }
        let isTagManifest = (name.hasPrefix("manifest-") || name.hasPrefix("tagmanifest-")) && name.hasSuffix(".txt")
        return fixedTextFiles.contains(String(name)) || isTagManifest || parts.dropLast().contains("reports")
    }

    /// The kinds of identifier in one line of text (`isJSON`: unescape JSON strings first;
    /// `freeText`: also apply the allow-list, an unknown token being ``IdentifierKind/unknownToken``).
    public func kinds(inLine line: String, isJSON: Bool = false, freeText: Bool = false) -> Set<IdentifierKind> {
        var workspace = LineWorkspace()
        var line = line
        return Self.kinds(line.withUTF8 { kindMask(utf8: $0, isJSON: isJSON, freeText: freeText, &workspace) })
    }

    /// Whether the free-text value of UTF-8 `bytes` holds a word the allow-list does not keep.
    func hasUnknownToken(utf8 bytes: UnsafeBufferPointer<UInt8>, isJSON: Bool, _ workspace: inout LineWorkspace) -> Bool {
        workspace.load(utf8: bytes)
        if isJSON { workspace.unescapeJSON() }
        let scalars = workspace.scalars
        return scalars.withUnsafeBufferPointer { s in
            TextTokenizer.tokenize(s, into: &workspace)
            guard let vocabulary else { return workspace.tokenCount > 0 }
            if AllowListFastPath.isPlainlySafe(s, workspace, vocabulary) { return false }
            var decider = AllowListDecider(text: s, workspace: workspace, vocabulary: vocabulary, initials: [])
            return !decider.spans().isEmpty
        }
    }

    /// ``kindMask(utf8:isJSON:_:)``, and for a free-text value the unknown-token bit.
    func kindMask(utf8 bytes: UnsafeBufferPointer<UInt8>, isJSON: Bool, freeText: Bool, _ workspace: inout LineWorkspace) -> UInt16 {
        var mask = kindMask(utf8: bytes, isJSON: isJSON, &workspace)
        if freeText, hasUnknownToken(utf8: bytes, isJSON: isJSON, &workspace) { mask |= Self.bit(.unknownToken) }
        return mask
    }

    static func kinds(_ mask: UInt16) -> Set<IdentifierKind> {
        var result: Set<IdentifierKind> = []
        for (bit, kind) in IdentifierKind.allCases.enumerated() where mask & (1 << bit) != 0 { result.insert(kind) }
        return result
    }

    @inline(__always)
    static func bit(_ kind: IdentifierKind) -> UInt16 {
        switch kind {
        case .name: 1 << 0
        case .email: 1 << 1
        case .phone: 1 << 2
        case .birthDate: 1 << 3
        case .mrn: 1 << 4
        case .address: 1 << 5
        case .device: 1 << 6
        case .code: 1 << 7
        case .unknownToken: 1 << 8
        }
    }

    /// The kinds in the line of UTF-8 `bytes`, one bit per kind in `IdentifierKind.allCases`
    /// order. Plain ASCII lines are matched on their bytes: in place, or (JSON lines with escapes)
    /// unescaped into the workspace's byte buffer, unless an escape stands for a non-ASCII
    /// scalar; other lines are decoded to scalars (and unescaped) in `workspace` first.
    func kindMask(utf8 bytes: UnsafeBufferPointer<UInt8>, isJSON: Bool, _ workspace: inout LineWorkspace) -> UInt16 {
        if Self.isASCII(bytes) {
            guard isJSON, let base = bytes.baseAddress, memchr(base, 0x5C, bytes.count) != nil else {
                return kindMask(bytes, &workspace)
            }
            // The buffer is moved out of the workspace while the line in it is matched.
            var unescaped: [UInt8] = []
            swap(&unescaped, &workspace.unescapedBytes)
            defer { swap(&unescaped, &workspace.unescapedBytes) }
            if let count = LineWorkspace.unescapeJSON(bytes, into: &unescaped) {
                return unescaped.withUnsafeBufferPointer { kindMask(UnsafeBufferPointer(rebasing: $0[0..<count]), &workspace) }
            }
        }
        workspace.load(utf8: bytes)
        return kindMask(&workspace, isJSON: isJSON)
    }

    /// Whether a CSV cell is a number of fewer than 10 digits (`-`, digits, at most one `.`): a
    /// quantity, not a phone, in a column that is not free text. The JSON files write the same
    /// values as numbers, which the JSON scan does not read; in CSV a daily total of 7–9 digits
    /// would otherwise meet the last digits of one of thousands of roster phones by chance (at
    /// bench L: 9–11 cells per export, so the export was refused). A full national number (10
    /// digits or more) in a numeric column is still a finding, as is any number in free text.
    static func isShortQuantity(_ value: UnsafeBufferPointer<UInt8>) -> Bool {
        var digits = 0, points = 0
        for (i, byte) in value.enumerated() {
            switch byte {
            case 0x30...0x39: digits += 1
            case 0x2E: points += 1
            case 0x2D where i == 0: continue
            default: return false
            }
        }
        return digits > 0 && digits < 10 && points <= 1
    }

    /// Whether every byte is below 0x80 (eight bytes at a time).
    @inline(__always)
    static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        let n = bytes.count
        var i = 0
        var high: UInt64 = 0
        while i + 8 <= n {
            high |= UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)
            i += 8
        }
        while i < n {
            high |= UInt64(base[i])
            i += 1
        }
        return high & 0x8080_8080_8080_8080 == 0
    }

    /// The kinds in the line loaded in `workspace` (as scalars).
    func kindMask(_ workspace: inout LineWorkspace, isJSON: Bool) -> UInt16 {
        if isJSON { workspace.unescapeJSON() }
        let scalars = workspace.scalars
        return scalars.withUnsafeBufferPointer { kindMask($0, &workspace) }
    }

    /// The kinds in `s`: the bytes of a plain ASCII line, or a line's scalars.
    func kindMask<C: FixedWidthInteger & UnsignedInteger>(_ s: UnsafeBufferPointer<C>, _ workspace: inout LineWorkspace) -> UInt16 {
        var mask: UInt16 = 0
        let numeric = index.numericKinds(s, groups: &workspace.groups)
        if numeric.phone { mask |= Self.bit(.phone) }
        if numeric.birthDate { mask |= Self.bit(.birthDate) }
        TextTokenizer.tokenize(s, into: &workspace)
        let tokens = workspace.tokens
        index.matches(scalars: s, workspace: workspace, skip: { t in Self.isMarker(tokens[t], in: s) }) { match in
            mask |= Self.bit(match.kind)
        }
        if mask & Self.bit(.name) == 0, !index.possessiveNames.isEmpty || !index.capitalizedNames.isEmpty {
            // A vocabulary surname alone counts as a capitalized possessive (`Field's`).
            for t in 0..<workspace.tokenCount {
                let token = tokens[t]
                guard token.isCapitalized, !Self.isMarker(token, in: s) else { continue }
                let key = workspace.keyString(token)
                guard index.possessiveNames.contains(key) || index.capitalizedNames.contains(key) else { continue }
                // Not before a disease or calendar word: `Bell's palsy`, as the scrubber decides.
                let next = t + 1 < workspace.tokenCount ? workspace.keyString(tokens[t + 1]) : ""
                let possessive = token.isPossessive && index.possessiveNames.contains(key) && !Scrubber.eponymHeads.contains(next)
                    && !ClinicalVocabulary.calendar.contains(next)
                // A dictionary-word name capitalized inside a sentence ("visit with Dubois").
                let inSentence = t > 0 && index.capitalizedNames.contains(key) && !ClinicalVocabulary.calendar.contains(key)
                    && !Self.sentenceBreak(s, from: tokens[t - 1].end, to: token.start)
                if possessive || inSentence {
                    mask |= Self.bit(.name)
                    break
                }
            }
        }
        return mask
    }

    /// Whether the code units `from..<to` between two words end a sentence or a line (`.`, `!`,
    /// `?`, `:`, `;`, a line break, a quote or bracket that opens), as the scrubber's sentence rule.
    static func sentenceBreak<C: FixedWidthInteger & UnsignedInteger>(_ s: UnsafeBufferPointer<C>, from: Int, to: Int) -> Bool {
        guard from <= to else { return true }
        for i in from..<to {
            switch UInt32(s[i]) {
            case 0x2E, 0x21, 0x3F, 0x0A, 0x0D, 0x3A, 0x3B, 0x22, 0x28, 0x2022, 0x5B, 0x5D: return true
            default: continue
            }
        }
        return false
    }

    /// Whether the word is a typed token such as `[NAME]`.
    static func isMarker<C: FixedWidthInteger & UnsignedInteger>(_ token: PackedToken, in s: UnsafeBufferPointer<C>) -> Bool {
        guard token.start > 0, s[token.start - 1] == 0x5B, token.end < s.count, s[token.end] == 0x5D else { return false }
        let length = token.end - token.start
        return markers.contains { marker in
            marker.count == length && marker.indices.allSatisfy { marker[$0] == UInt32(s[token.start + $0]) }
        }
    }

    /// How a file's values are found.
    enum FileFormat: Sendable {
        /// Data rows' cells, named by the header.
        case csv
        /// String values, one JSON value per line.
        case ndjson
        /// String values of a JSON text that may span lines.
        case json
        /// Whole lines.
        case text

        init(path: String) {
            switch URL(fileURLWithPath: path).pathExtension.lowercased() {
            case "csv": self = .csv
            case "ndjson", "jsonl": self = .ndjson
            case "json": self = .json
            default: self = .text
            }
        }

        /// Whether a piece of the file can be scanned on its own (no state across lines).
        var splits: Bool { self == .ndjson || self == .text }
    }

    /// One piece of work: a byte range of a file (cut after a line end).
    private struct Piece: Sendable {
        var file: Int
        var range: Range<Int>
    }

    struct Hit: Sendable {
        var line: Int
        var mask: UInt16
        var field: String?
        var sha256: String
    }

    /// What one piece (or a whole file scanned as written) found and counted; `lines` numbers
    /// the next piece's lines on.
    struct PieceResult: Sendable {
        var findings: [Hit] = []
        var lines = 0
        var freeTextValues = 0
        var values = 0
    }

    private func scan(_ files: [(name: String, url: URL)], written: WrittenFileScan? = nil) throws
        -> (findings: [ResidualFinding], freeTextValues: Int, values: Int, asWritten: Int)
    {
        // Per file, its pieces' results in order: the one result of a file scanned as it was
        // written, or the pieces read here.
        var perFile: [[PieceResult]] = Array(repeating: [], count: files.count)
        var planned: [Piece] = []
        var asWritten = 0
        for (number, file) in files.enumerated() {
            if let done = written?.tapOnlyResult(for: file.name) ?? written?.result(for: file.name, identity: FileIdentity(path: file.url.path)) {
                perFile[number] = [done]
                asWritten += 1
                continue
            }
            let size = FileFormat(path: file.url.path).splits ? pieceSize : Int.max / 2
            let bounds = try LineReader.pieces(of: file.url, size: size)
            planned += bounds.map { Piece(file: number, range: $0) }
        }
        // Pieces are scanned on `threads` threads; results come back in piece order.
        let results = try Parallel.map(planned, threads: threads) { piece -> PieceResult in
            let file = files[piece.file]
            var result = PieceResult()
            var values = ValueScanner(scanner: self, format: FileFormat(path: file.url.path))
            result.lines = try LineReader.forEachLine(of: file.url, in: piece.range) { number, bytes in
                values.line(number, bytes) { result.findings.append($0) }
            }
            values.finish { result.findings.append($0) }
            result.freeTextValues = values.freeTextValues
            result.values = values.values
            return result
        }
        for (piece, result) in zip(planned, results) { perFile[piece.file].append(result) }
        var findings: [ResidualFinding] = []
        for (number, pieces) in perFile.enumerated() {
            var lineOffset = 0
            for result in pieces {
                for hit in result.findings {
                    for (bit, kind) in IdentifierKind.allCases.enumerated() where hit.mask & (1 << bit) != 0 {
                        findings.append(
                            ResidualFinding(file: files[number].name, line: lineOffset + hit.line, kind: kind, field: hit.field, valueSHA256: hit.sha256))
                    }
                }
                lineOffset += result.lines
            }
        }
        let all = perFile.joined()
        return (findings, all.reduce(0) { $0 + $1.freeTextValues }, all.reduce(0) { $0 + $1.values }, asWritten)
    }

    /// Finds the participant values of one file (or piece) line by line and matches each.
    struct ValueScanner {
        let scanner: ResidualScanner
        let format: FileFormat
        var workspace = LineWorkspace()
        // CSV: the header, and a quoted cell that continues on the next line.
        var header: [String]? {
            didSet { headerFreeText = header.map { $0.map { ResidualScanner.freeTextColumns.contains($0) } } ?? [] }
        }
        /// Per header column, whether it is free text (decided once per file, not per cell).
        var headerFreeText: [Bool] = []
        var headerCells: [String] = []
        var cell: [UInt8] = []
        var column = 0
        var cellLine = 0
        var inQuotes = false
        var continuing = false
        // JSON: the open containers and their keys, the key path as bytes (``JSONKeyStack``).
        let keys = JSONKeyStack()
        var expectKey = false
        /// NDJSON: how many values of the current line were checked (the memo's slot).
        var lineValues = 0
        /// Per slot (CSV column, NDJSON value number in its line), the last value checked there
        /// and its kinds (``memoizedMask(_:slot:isJSON:freeText:)``).
        var memo: [(bytes: [UInt8], freeText: Bool, mask: UInt16)] = []
        /// Values matched recently in any slot and their kinds, at ``recentIndex(_:tag:)``; `tag`
        /// is `isJSON` and `freeText` as two bits (0xFF: empty). A FHIR resource's timestamps come
        /// again in other slots of the next resources (`effectiveDateTime`, `effectivePeriod.start`).
        var recent: [(bytes: [UInt8], tag: UInt8, mask: UInt16)] = Array(repeating: ([], 0xFF, 0), count: ValueScanner.recentCount)
        static let recentCount = 256
        /// Free-text values checked against the allow-list.
        var freeTextValues = 0
        /// Values checked for roster forms: CSV cells (not the header), JSON strings that are not
        /// fixed vocabulary, lines of other text files.
        var values = 0

        init(scanner: ResidualScanner, format: FileFormat) {
            self.scanner = scanner
            self.format = format
        }

        mutating func line(_ number: Int, _ bytes: UnsafeBufferPointer<UInt8>, _ emit: (Hit) -> Void) {
            switch format {
            case .text:
                values += 1
                let mask = scanner.kindMask(utf8: bytes, isJSON: false, &workspace)
                if mask != 0 { emit(Hit(line: number, mask: mask, field: nil, sha256: SHA256.hex(bytes))) }
            case .csv:
                csvLine(number, bytes, emit)
            case .ndjson:
                keys.reset()
                lineValues = 0
                expectKey = false
                jsonLine(number, bytes, emit)
            case .json:
                jsonLine(number, bytes, emit)
            }
        }

        /// Ends the file: a CSV cell left open by a missing closing quote is matched as it is.
        mutating func finish(_ emit: (Hit) -> Void) {
            if format == .csv, continuing {
                endCell(emit)
                endRecord()
            }
        }

        // MARK: CSV

        private mutating func csvLine(_ number: Int, _ bytes: UnsafeBufferPointer<UInt8>, _ emit: (Hit) -> Void) {
            let n = bytes.count
            if !continuing {
                column = 0
                cellLine = number
                // Fast path: a record on one line without quotes, cells matched in place.
                if header != nil, let base = bytes.baseAddress, memchr(base, 0x22, n) == nil {
                    var start = 0
                    for i in 0...n where i == n || bytes[i] == 0x2C {
                        if i > start { check(UnsafeBufferPointer(rebasing: bytes[start..<i]), line: number, emit) }
                        column += 1
                        start = i + 1
                    }
                    return
                } else if n == 0 && header != nil {
                    return
                }
                cell.removeAll(keepingCapacity: true)
                inQuotes = false
            } else {
                cell.append(0x0A)  // the line break inside the quoted cell
            }
            continuing = false
            var i = 0
            while i < n {
                let b = bytes[i]
                if inQuotes {
                    if b == 0x22 {
                        if i + 1 < n, bytes[i + 1] == 0x22 {
                            cell.append(0x22)
                            i += 1
                        } else {
                            inQuotes = false
                        }
                    } else {
                        cell.append(b)
                    }
                } else if b == 0x2C {
                    endCell(emit)
                    column += 1
                    cellLine = number
                } else if b == 0x22 && cell.isEmpty {
                    inQuotes = true
                } else {
                    cell.append(b)
                }
                i += 1
            }
            if inQuotes {
                continuing = true
                return
            }
            endCell(emit)
            endRecord()
        }

        private mutating func endCell(_ emit: (Hit) -> Void) {
            if header == nil {
                headerCells.append(String(decoding: cell, as: UTF8.self))
            } else if !cell.isEmpty {
                var value: [UInt8] = []
                swap(&value, &cell)
                value.withUnsafeBufferPointer { check($0, line: cellLine, emit) }
                swap(&value, &cell)
            }
            cell.removeAll(keepingCapacity: true)
        }

        private mutating func endRecord() {
            if header == nil {
                header = headerCells
                headerCells = []
            }
            column = 0
        }

        private mutating func check(_ value: UnsafeBufferPointer<UInt8>, line: Int, _ emit: (Hit) -> Void) {
            // A column past the header is named `column N`, which is never a free-text name.
            let freeText = column < headerFreeText.count && headerFreeText[column]
            values += 1
            if freeText { freeTextValues += 1 }
            var mask = memoizedMask(value, slot: column, isJSON: false, freeText: freeText)
            let phone = ResidualScanner.bit(.phone)
            if mask & phone != 0, !freeText, ResidualScanner.isShortQuantity(value) { mask &= ~phone }
            guard mask != 0 else { return }
            emit(Hit(line: line, mask: mask, field: columnName(), sha256: SHA256.hex(value)))
        }

        /// ``ResidualScanner/kindMask(utf8:isJSON:freeText:_:)`` of `value`, remembered per slot.
        /// The mask is a function of the value's bytes, `isJSON` (fixed per file) and `freeText`
        /// alone (the workspace is scratch space; the index and vocabulary do not change), so a
        /// value equal to the slot's last one, with the same `freeText`, has the same mask. Export
        /// rows repeat their pseudonym, kind, unit and source from row to row; those are matched once
        /// per run of equal values; a value the slot does not hold is looked up in ``recent``
        /// (``recentMask(_:isJSON:freeText:)``). A negative slot is not remembered.
        mutating func memoizedMask(_ value: UnsafeBufferPointer<UInt8>, slot: Int, isJSON: Bool, freeText: Bool) -> UInt16 {
            guard slot >= 0, slot < 64 else {
                return scanner.digitWordMask(value, freeText: freeText, &workspace)
                    ?? scanner.kindMask(utf8: value, isJSON: isJSON, freeText: freeText, &workspace)
            }
            if slot < memo.count, memo[slot].freeText == freeText, Self.same(memo[slot].bytes, value) { return memo[slot].mask }
            // A value of digit-led words (a timestamp, a number) is decided without the tokenizer
            // and not kept in ``recent``; the rest goes through it.
            let mask = scanner.digitWordMask(value, freeText: freeText, &workspace) ?? recentMask(value, isJSON: isJSON, freeText: freeText)
            while memo.count <= slot { memo.append(([], false, 0)) }
            memo[slot].bytes.removeAll(keepingCapacity: true)
            memo[slot].bytes.append(contentsOf: value)
            memo[slot].freeText = freeText
            memo[slot].mask = mask
            return mask
        }

        /// ``ResidualScanner/kindMask(utf8:isJSON:freeText:_:)`` of `value`, from ``recent`` when
        /// the entry its bytes hash to holds the same bytes with the same `isJSON` and `freeText`
        /// (the mask is a function of those three alone), else matched and kept there.
        mutating func recentMask(_ value: UnsafeBufferPointer<UInt8>, isJSON: Bool, freeText: Bool) -> UInt16 {
            let tag: UInt8 = (isJSON ? 1 : 0) | (freeText ? 2 : 0)
            let index = Self.recentIndex(value, tag: tag)
            if recent[index].tag == tag, Self.same(recent[index].bytes, value) { return recent[index].mask }
            let mask = scanner.kindMask(utf8: value, isJSON: isJSON, freeText: freeText, &workspace)
            recent[index].bytes.removeAll(keepingCapacity: true)
            recent[index].bytes.append(contentsOf: value)
            recent[index].tag = tag
            recent[index].mask = mask
            return mask
        }

        /// Whether `kept` (a memo's or ``recent``'s bytes) holds exactly `value`'s bytes.
        @inline(__always)
        static func same(_ kept: [UInt8], _ value: UnsafeBufferPointer<UInt8>) -> Bool {
            kept.count == value.count && kept.withUnsafeBufferPointer { value.count == 0 || memcmp($0.baseAddress!, value.baseAddress!, value.count) == 0 }
        }

        /// Where `value` (with `tag`) is kept in ``recent``: FNV-1a of its bytes and tag.
        @inline(__always)
        static func recentIndex(_ value: UnsafeBufferPointer<UInt8>, tag: UInt8) -> Int {
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325 ^ UInt64(tag)
            for byte in value { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
            return Int(truncatingIfNeeded: (hash ^ (hash >> 32)) % UInt64(recentCount))
        }

        /// The current column's name in findings: its header cell, else `column N`.
        func columnName() -> String {
            header.flatMap { column < $0.count ? $0[column] : nil } ?? "column \(column + 1)"
        }

        // MARK: JSON

        private mutating func jsonLine(_ number: Int, _ bytes: UnsafeBufferPointer<UInt8>, _ emit: (Hit) -> Void) {
            guard let base = bytes.baseAddress else { return }
            let n = bytes.count
            var i = 0
            while i < n {
                switch base[i] {
                case 0x7B:  // {
                    keys.open(object: true)
                    expectKey = true
                case 0x5B:  // [
                    keys.open(object: false)
                    expectKey = false
                case 0x7D, 0x5D:  // } ]
                    keys.close()
                    expectKey = false
                case 0x2C:  // ,
                    expectKey = keys.inObject
                case 0x3A:  // :
                    expectKey = false
                case 0x22:  // a string: up to the next quote not escaped
                    let j = Self.stringEnd(base, from: i + 1, count: n)
                    let raw = UnsafeBufferPointer(start: base + i + 1, count: j - i - 1)
                    if expectKey, keys.inObject {
                        keys.setKey(raw)
                    } else if !raw.isEmpty, !keys.isFixedField() {
                        value(raw, line: number, emit)
                    }
                    i = j
                default:
                    break
                }
                i += 1
            }
        }

        /// A JSON string value that is not fixed vocabulary: counted, matched, a hit emitted.
        private mutating func value(_ raw: UnsafeBufferPointer<UInt8>, line number: Int, _ emit: (Hit) -> Void) {
            let freeText = Self.isFreeTextPath(keys.pathBuffer)
            values += 1
            if freeText { freeTextValues += 1 }
            let mask = memoizedMask(raw, slot: format == .ndjson ? lineValues : -1, isJSON: true, freeText: freeText)
            lineValues += 1
            if mask != 0 { emit(Hit(line: number, mask: mask, field: keyPath(), sha256: Self.jsonStringSHA256(raw))) }
        }

        /// Where the JSON string whose content starts at `start` ends: the index of the first quote
        /// at or after `start` that no backslash escapes, or `count` when the line has none. A
        /// backslash escapes the byte after it, so a quote ends the string exactly when the run of
        /// backslashes right before it (within the string) is even: the byte before such a run is
        /// not a backslash, so the run starts outside any escape and pairs off from its start.
        /// Quotes are found with `memchr` (most of a FHIR line's bytes are inside strings).
        @inline(__always)
        static func stringEnd(_ base: UnsafePointer<UInt8>, from start: Int, count n: Int) -> Int {
            var from = start
            while from < n, let found = memchr(base + from, 0x22, n - from) {
                let quote = UnsafeRawPointer(base).distance(to: UnsafeRawPointer(found))
                var run = quote
                while run > start, base[run - 1] == 0x5C { run -= 1 }
                if (quote - run) & 1 == 0 { return quote }
                from = quote + 1
            }
            return n
        }

        /// What a key is, for ``isFixedField()``: decided once when the key is read.
        enum KeyClass {
            case none, fixed, display, coding, other
        }

        /// Opens a container (without a key yet).
        func open(object: Bool) { keys.open(object: object) }

        /// Closes the innermost container: its key leaves the path.
        func close() { keys.close() }

        /// The innermost container's key is now `raw` (its JSON string content).
        func setKey(_ raw: UnsafeBufferPointer<UInt8>) { keys.setKey(raw) }

        /// The current value's key path as UTF-8 (``JSONKeyStack``).
        var pathBytes: [UInt8] { Array(keys.pathBuffer) }

        /// The key path of the current value: the keys of the open objects, joined by dots (each
        /// key decoded on its own, as the path has always been made).
        func keyPath() -> String { keys.keyPath() }

        /// Whether the current value's key is fixed vocabulary (``JSONKeyStack/isFixedField()``).
        func isFixedField() -> Bool { keys.isFixedField() }

        private static let fixedKeys: [[UInt8]] = ResidualScanner.fixedJSONKeys.map { Array($0.utf8) }
        private static let display = Array("display".utf8)
        private static let coding = Array("coding".utf8)

        /// The keys ``keyClass(_:)`` knows, with their length and first eight bytes (``prefix(_:)``)
        /// to compare first; `display` and `coding` are not fixed keys, so the order is free. The
        /// heads hold no reference (the loop over them retains nothing); `classifiedWords[i]` is
        /// entry i's key.
        private static let classifiedWords: [[UInt8]] = fixedKeys + [display, coding]
        private static let classifiedHeads: [(count: Int, prefix: UInt64, kind: KeyClass)] = classifiedWords.map { word in
            (word.count, word.withUnsafeBufferPointer(prefix), word == display ? .display : word == coding ? .coding : .fixed)
        }
        /// Per key length below 64, a bit for each entry of ``classifiedHeads`` of that length
        /// (a key of another length is none of them).
        private static let headsByLength: [UInt64] = (0..<64).map { length in
            classifiedHeads.enumerated().reduce(0) { $0 | ($1.element.count == length ? 1 << UInt64($1.offset) : 0) }
        }

        /// The first (up to) eight bytes of `bytes`, zero-padded, as one number.
        @inline(__always)
        static func prefix(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
            if bytes.count >= 8, let base = bytes.baseAddress { return UInt64(littleEndian: UnsafeRawPointer(base).loadUnaligned(as: UInt64.self)) }
            var value: UInt64 = 0
            for index in 0..<bytes.count { value |= UInt64(bytes[index]) << (8 * UInt64(index)) }
            return value
        }

        /// What `key` is: one of ``ResidualScanner/fixedJSONKeys``, `display`, `coding`, or another.
        static func keyClass(_ key: UnsafeBufferPointer<UInt8>) -> KeyClass {
            guard let base = key.baseAddress, !key.isEmpty else { return .none }
            guard key.count < 64 else { return .other }
            var candidates = headsByLength[key.count]
            guard candidates != 0 else { return .other }
            let head = prefix(key)
            while candidates != 0 {
                let i = candidates.trailingZeroBitCount
                candidates &= candidates - 1
                let entry = classifiedHeads[i]
                // Same length and first eight bytes: the rest (if any) decides.
                if entry.prefix == head,
                    key.count <= 8 || classifiedWords[i].withUnsafeBufferPointer({ memcmp($0.baseAddress! + 8, base + 8, key.count - 8) == 0 })
                {
                    return entry.kind
                }
            }
            return .other
        }

        private static let freeTextWholePaths: [[UInt8]] = ResidualScanner.freeTextJSONPaths.map { Array($0.utf8) }
        private static let freeTextPathSuffixes: [[UInt8]] = ResidualScanner.freeTextJSONPathSuffixes.map { Array($0.utf8) }
        /// The last bytes of the free-text literals, one bit per ASCII byte.
        private static let literalEnds: UInt128 = (freeTextWholePaths + freeTextPathSuffixes).reduce(0) { ends, literal in
            literal.last.map { $0 < 0x80 ? ends | 1 << UInt128($0) : ends } ?? ends
        }

        /// ``ResidualScanner/isFreeTextJSONPath(_:)`` of the path whose UTF-8 bytes are `path`.
        /// An ASCII path is compared byte for byte: every ASCII byte is a `Character` of its own
        /// (save CR LF, and no literal starts with LF), so `==` and `hasSuffix` of ASCII literals
        /// are byte comparisons there. Any other path goes through the `String` function itself
        /// (`hasSuffix` compares grapheme clusters: a prepended mark can absorb the `n`).
        static func isFreeTextPath(_ path: UnsafeBufferPointer<UInt8>) -> Bool {
            // A path whose last byte is an ASCII byte no literal ends with ends in a `Character`
            // no literal ends with (nothing combines into or decomposes from an ASCII scalar).
            guard let p = path.baseAddress, let last = path.last else { return false }
            if last < 0x80, literalEnds & (1 << UInt128(last)) == 0 { return false }
            guard ResidualScanner.isASCII(path) else {
                return ResidualScanner.isFreeTextJSONPath(String(decoding: path, as: UTF8.self))
            }
            if freeTextWholePaths.contains(where: { $0.count == path.count && memcmp($0, p, path.count) == 0 }) { return true }
            return freeTextPathSuffixes.contains { suffix in
                suffix.count <= path.count && memcmp(p + (path.count - suffix.count), suffix, suffix.count) == 0
            }
        }

        /// ``isFreeTextPath(_:)`` of the bytes of `path`.
        static func isFreeTextPath(_ path: [UInt8]) -> Bool {
            path.withUnsafeBufferPointer { isFreeTextPath($0) }
        }

        /// SHA-256 of the unescaped JSON string whose raw content is `raw` (of `raw` itself when
        /// it is not a valid JSON string).
        static func jsonStringSHA256(_ raw: UnsafeBufferPointer<UInt8>) -> String {
            let quoted = Data([0x22] + Array(raw) + [0x22])
            if let value = try? JSONSerialization.jsonObject(with: quoted, options: .fragmentsAllowed) as? String {
                return SHA256.hex(Array(value.utf8))
            }
            return SHA256.hex(raw)
        }
    }
}
