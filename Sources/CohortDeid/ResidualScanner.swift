public import CohortCore
public import Foundation

/// Scans output files for any identifier of any participant on the roster, after writing and
/// before publishing: full names, last names (4+ letters) as whole words, emails, phone numbers
/// in any formatting (7+ digits matching a roster phone's last 10, or its 7-digit local form),
/// birth dates written numerically or with month names, MRNs, study codes, the street line of
/// addresses, and device names that carry a name or a serial number.
///
/// Text is compared in normalized form (case and diacritics folded, punctuation and white
/// space collapsed, apostrophes and possessives removed). Lines of `.json`/`.ndjson` files are
/// JSON-unescaped first, so `Jos\u00e9` is found as `José`. Files are read line by line with a
/// fixed buffer. Findings name file, line and kind, never the value. Typed tokens such as
/// `[NAME]` and pseudonyms (one 16-character word) do not match.
///
/// Plain ASCII lines are matched on their bytes where they were read; other lines are decoded
/// (and JSON-unescaped) into reused scalar buffers. Every word costs one hash probe into a table
/// of first words, so the cost per byte does not grow with the roster. Files are cut at line
/// ends into pieces of a few megabytes scanned on `threads` threads; findings come back in
/// path and line order whatever the thread count.
public struct ResidualScanner: Sendable {
    private let index: IdentifierIndex
    /// How many threads ``scan(files:)`` and ``scan(directory:)`` use.
    public let threads: Int
    /// Files are cut into pieces of about this many bytes (at line ends) for the threads.
    let pieceSize: Int
    private static let markers: [[UInt32]] = ScrubToken.allCases.map { $0.rawValue.unicodeScalars.map(\.value) }

    /// A scanner for the identifiers of everyone on `roster`, scanning on up to two threads.
    public init(roster: [Participant]) {
        self.init(roster: roster, threads: min(2, max(1, ProcessInfo.processInfo.activeProcessorCount)))
    }

    /// A scanner for the identifiers of everyone on `roster`, scanning on `threads` threads
    /// (at least one); the findings do not depend on the thread count.
    public init(roster: [Participant], threads: Int) {
        self.init(roster: roster, threads: threads, pieceSize: 4 << 20)
    }

    init(roster: [Participant], threads: Int, pieceSize: Int) {
        index = IdentifierIndex(roster: roster, mode: .scanner)
        self.threads = max(1, threads)
        self.pieceSize = max(1, pieceSize)
    }

    /// Scans `files`; paths in findings are the files' paths as given.
    public func scan(files: [URL]) throws -> [ResidualFinding] {
        try scan(files.map { ($0.path, $0) })
    }

    /// Scans every regular file under `directory` (recursively, in path order); paths in findings
    /// are relative to `directory`.
    public func scan(directory: URL) throws -> ResidualScanResult {
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
        files.sort { $0.relative < $1.relative }
        let findings = try scan(files.map { ($0.relative, $0.url) })
        return ResidualScanResult(filesScanned: files.count, findings: findings)
    }

    /// The kinds of identifier in one line of text (`isJSON`: unescape JSON strings first).
    public func kinds(inLine line: String, isJSON: Bool = false) -> Set<IdentifierKind> {
        var workspace = LineWorkspace()
        var line = line
        return Self.kinds(line.withUTF8 { kindMask(utf8: $0, isJSON: isJSON, &workspace) })
    }

    static func kinds(_ mask: UInt16) -> Set<IdentifierKind> {
        var result: Set<IdentifierKind> = []
        for (bit, kind) in IdentifierKind.allCases.enumerated() where mask & (1 << bit) != 0 { result.insert(kind) }
        return result
    }

    @inline(__always)
    private static func bit(_ kind: IdentifierKind) -> UInt16 {
        switch kind {
        case .name: 1 << 0
        case .email: 1 << 1
        case .phone: 1 << 2
        case .birthDate: 1 << 3
        case .mrn: 1 << 4
        case .address: 1 << 5
        case .device: 1 << 6
        case .code: 1 << 7
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
            if let count = LineWorkspace.unescapeASCIIJSON(bytes, into: &unescaped) {
                return unescaped.withUnsafeBufferPointer { kindMask(UnsafeBufferPointer(rebasing: $0[0..<count]), &workspace) }
            }
        }
        workspace.load(utf8: bytes)
        return kindMask(&workspace, isJSON: isJSON)
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
        return mask
    }

    /// Whether the word is a typed token such as `[NAME]`.
    static func isMarker<C: FixedWidthInteger & UnsignedInteger>(_ token: PackedToken, in s: UnsafeBufferPointer<C>) -> Bool {
        guard token.start > 0, s[token.start - 1] == 0x5B, token.end < s.count, s[token.end] == 0x5D else { return false }
        let length = token.end - token.start
        return markers.contains { marker in
            marker.count == length && marker.indices.allSatisfy { marker[$0] == UInt32(s[token.start + $0]) }
        }
    }

    /// One piece of work: a byte range of a file (cut after a line end).
    private struct Piece: Sendable {
        var file: Int
        var range: Range<Int>
    }

    private struct PieceResult: Sendable {
        var findings: [(line: Int, mask: UInt16)] = []
        var lines = 0
    }

    private func scan(_ files: [(name: String, url: URL)]) throws -> [ResidualFinding] {
        var planned: [Piece] = []
        for (number, file) in files.enumerated() {
            let bounds = try LineReader.pieces(of: file.url, size: pieceSize)
            planned += bounds.map { Piece(file: number, range: $0) }
        }
        // Pieces are scanned on `threads` threads; results come back in piece order.
        let results = try Parallel.map(planned, threads: threads) { piece -> PieceResult in
            let file = files[piece.file]
            let ext = file.url.pathExtension.lowercased()
            let isJSON = ext == "json" || ext == "ndjson" || ext == "jsonl"
            var workspace = LineWorkspace()
            var result = PieceResult()
            result.lines = try LineReader.forEachLine(of: file.url, in: piece.range) { number, bytes in
                let mask = kindMask(utf8: bytes, isJSON: isJSON, &workspace)
                if mask != 0 { result.findings.append((number, mask)) }
            }
            return result
        }
        var findings: [ResidualFinding] = []
        var lineOffset = 0
        var currentFile = -1
        for (piece, result) in zip(planned, results) {
            if piece.file != currentFile {
                currentFile = piece.file
                lineOffset = 0
            }
            for (line, mask) in result.findings {
                for (bit, kind) in IdentifierKind.allCases.enumerated() where mask & (1 << bit) != 0 {
                    findings.append(ResidualFinding(file: files[piece.file].name, line: lineOffset + line, kind: kind))
                }
            }
            lineOffset += result.lines
        }
        return findings
    }
}
