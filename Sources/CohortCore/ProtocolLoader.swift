public import Foundation
import Yams

/// A protocol that loaded without errors, with the warnings found and its canonical form.
public struct LoadedProtocol: Sendable {
    public var studyProtocol: StudyProtocol
    public var warnings: [ProtocolProblem]
    /// The file it came from.
    public var source: URL?

    /// Canonical JSON (sorted keys, no insignificant space): what the protocol hash is taken over.
    public func canonicalJSON() throws -> Data { try CanonicalJSON.encode(studyProtocol) }
}

/// Loads and validates `cohort/protocol@1` files (YAML, or JSON — a subset of YAML), reporting
/// every problem at once with file, line and key path.
public enum ProtocolLoader {
    /// Loads `url`. Template paths are checked relative to `templateRoot` (default: the parent of
    /// the protocol file's directory, i.e. the project root for `protocols/x.yaml`).
    public static func load(contentsOf url: URL, templateRoot: URL? = nil) throws -> LoadedProtocol {
        let name = url.path
        guard let data = FileManager.default.contents(atPath: url.path) else {
            throw CohortError(
                .notFound, "cannot read the protocol file", at: .init(file: name),
                hint: "check the path; protocols live in protocols/*.yaml")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw ProtocolValidationError(problems: [
                ProtocolProblem(.error, file: name, line: nil, keyPath: "", message: "the file is not UTF-8 text")
            ])
        }
        let root = templateRoot ?? url.deletingLastPathComponent().deletingLastPathComponent()
        var loaded = try parse(text, file: name, templateRoot: root)
        loaded.source = url
        return loaded
    }

    /// Parses and validates protocol text. Throws `ProtocolValidationError` with every error;
    /// warnings come back with the result.
    public static func parse(_ text: String, file: String, templateRoot: URL?) throws -> LoadedProtocol {
        let reader = NodeReader(file: file)
        let node: Node?
        do {
            node = try Yams.compose(yaml: text)
        } catch let error as YamlError {
            throw ProtocolValidationError(problems: [reader.syntaxProblem(error)])
        }
        guard let node else {
            throw ProtocolValidationError(problems: [
                ProtocolProblem(.error, file: file, line: 1, keyPath: "", message: "the file is empty", hint: "start from protocols/minimal.yaml")
            ])
        }
        let studyProtocol = reader.readProtocol(node)
        if let studyProtocol, let templateRoot { reader.checkTemplates(studyProtocol, root: templateRoot, node: node) }
        let errors = reader.problems.filter { $0.severity == .error }
        guard errors.isEmpty, let studyProtocol else {
            throw ProtocolValidationError(problems: reader.problems)
        }
        return LoadedProtocol(studyProtocol: studyProtocol, warnings: reader.problems, source: nil)
    }
}

/// Walks a YAML node tree, collecting problems instead of stopping at the first.
final class NodeReader {
    let file: String
    var problems: [ProtocolProblem] = []

    init(file: String) { self.file = file }

    func error(_ node: Node?, _ path: String, _ message: String, hint: String? = nil) {
        problems.append(ProtocolProblem(.error, file: file, line: node?.mark?.line, keyPath: path, message: message, hint: hint))
    }

    func warning(_ node: Node?, _ path: String, _ message: String, hint: String? = nil) {
        problems.append(ProtocolProblem(.warning, file: file, line: node?.mark?.line, keyPath: path, message: message, hint: hint))
    }

    func syntaxProblem(_ error: YamlError) -> ProtocolProblem {
        let (line, problem): (Int?, String) =
            switch error {
            case let .scanner(_, problem, mark, _): (mark.line, problem)
            case let .parser(_, problem, mark, _): (mark.line, problem)
            case let .composer(_, problem, mark, _): (mark.line, problem)
            case let .duplicatedKeysInMapping(duplicates, context): (context.mark.line, "duplicate keys: \(duplicates.joined(separator: ", "))")
            default: (nil, "the file is not valid YAML or JSON")
            }
        return ProtocolProblem(.error, file: file, line: line, keyPath: "", message: "malformed YAML: \(problem)", hint: "fix the syntax at that line")
    }

    // MARK: Primitive readers

    /// Reads a mapping, reporting unknown keys (with a suggestion) and missing required keys.
    func mapping(_ node: Node?, _ path: String, keys: [String], required: [String]) -> [String: Node]? {
        guard let node else { return nil }
        guard case let .mapping(mapping) = node else {
            error(node, path, "expected a mapping (key: value pairs), found \(describe(node))")
            return nil
        }
        var result: [String: Node] = [:]
        for (keyNode, value) in mapping {
            guard case let .scalar(scalar) = keyNode else {
                error(keyNode, path, "keys must be plain text")
                continue
            }
            let key = scalar.string
            let keyPath = join(path, key)
            if !keys.contains(key) {
                let hint = Suggest.closest(to: key, in: keys).map { "did you mean '\($0)'?" } ?? "allowed keys: \(keys.joined(separator: ", "))"
                error(keyNode, keyPath, "unknown key", hint: hint)
                continue
            }
            result[key] = value
        }
        for key in required where result[key] == nil {
            error(node, join(path, key), "missing required key", hint: "add '\(key):' to \(path.isEmpty ? "the top level" : path)")
        }
        return result
    }

    func string(_ node: Node?, _ path: String, nonEmpty: Bool = true) -> String? {
        guard let node else { return nil }
        guard case let .scalar(scalar) = node, scalar.tag.description != Tag.Name.null.rawValue || !scalar.string.isEmpty else {
            error(node, path, "expected text, found \(describe(node))")
            return nil
        }
        let text = scalar.string.trimmingCharacters(in: .whitespacesAndNewlines)
        if nonEmpty, text.isEmpty || text == "~" || text == "null" {
            error(node, path, "must not be empty")
            return nil
        }
        return text
    }

    func int(_ node: Node?, _ path: String, range: ClosedRange<Int>) -> Int? {
        guard let node else { return nil }
        guard case let .scalar(scalar) = node, let value = Int(scalar.string) else {
            error(node, path, "expected a whole number, found \(describe(node))")
            return nil
        }
        guard range.contains(value) else {
            error(node, path, "must be between \(range.lowerBound) and \(range.upperBound), found \(value)")
            return nil
        }
        return value
    }

    func double(_ node: Node?, _ path: String, range: ClosedRange<Double>) -> Double? {
        guard let node else { return nil }
        guard case let .scalar(scalar) = node, let value = Double(scalar.string), value.isFinite else {
            error(node, path, "expected a number, found \(describe(node))")
            return nil
        }
        guard range.contains(value) else {
            error(node, path, "must be between \(range.lowerBound) and \(range.upperBound), found \(scalar.string)")
            return nil
        }
        return value
    }

    func bool(_ node: Node?, _ path: String) -> Bool? {
        guard let node else { return nil }
        guard case let .scalar(scalar) = node else {
            error(node, path, "expected true or false, found \(describe(node))")
            return nil
        }
        switch scalar.string.lowercased() {
        case "true", "yes", "on": return true
        case "false", "no", "off": return false
        default:
            error(node, path, "expected true or false, found '\(scalar.string)'")
            return nil
        }
    }

    func date(_ node: Node?, _ path: String) -> CivilDate? {
        guard let text = string(node, path) else { return nil }
        guard let date = CivilDate(iso: text) else {
            error(node, path, "expected a date YYYY-MM-DD, found '\(text)'")
            return nil
        }
        return date
    }

    func sequence(_ node: Node?, _ path: String) -> [Node]? {
        guard let node else { return nil }
        guard case let .sequence(sequence) = node else {
            error(node, path, "expected a list, found \(describe(node))")
            return nil
        }
        return Array(sequence)
    }

    func enumValue<E: RawRepresentable & CaseIterable>(_ node: Node?, _ path: String, _ type: E.Type) -> E? where E.RawValue == String {
        guard let text = string(node, path) else { return nil }
        if let value = E(rawValue: text) { return value }
        let names = E.allCases.map(\.rawValue)
        let hint = Suggest.closest(to: text, in: names).map { "did you mean '\($0)'?" } ?? "one of: \(names.joined(separator: ", "))"
        error(node, path, "unknown value '\(text)'", hint: hint)
        return nil
    }

    func describe(_ node: Node) -> String {
        switch node {
        case let .scalar(scalar): scalar.string.isEmpty ? "nothing" : "'\(scalar.string)'"
        case .mapping: "a mapping"
        case .sequence: "a list"
        case .alias: "an alias"
        }
    }

    func join(_ path: String, _ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }
}
