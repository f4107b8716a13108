import CohortCore
package import Foundation
import SystemPackage

/// Writes rows an import rejected: `line,field,reason,<original columns…>` as CSV, header first.
/// The file is created with mode 0600 (it holds raw values, identifiers among them) and only
/// when the first row is rejected is the header written.
package final class RejectsWriter {
    private let descriptor: FileDescriptor
    private let path: String
    private let columns: [String]
    private var wroteHeader = false
    private var closed = false

    /// Creates (or empties) the file at `url`, mode 0600; `columns` are the input's columns, in
    /// the order they follow `line,field,reason`.
    ///
    /// - Throws: `CohortError` (`system`) naming the file when it cannot be created.
    package init(url: URL, columns: [String]) throws {
        path = url.path
        self.columns = columns
        do {
            descriptor = try FileDescriptor.open(
                FilePath(path), .writeOnly, options: [.create, .truncate, .closeOnExec], permissions: [.ownerReadWrite])
        } catch {
            throw CohortError(.system, "cannot write the rejects file", at: .init(file: path), underlying: "\(error)")
        }
        // An existing file keeps its mode through O_CREAT: narrow it, as for a new one.
        guard fchmod(descriptor.rawValue, 0o600) == 0 else {
            let code = Errno(rawValue: errno)
            try? descriptor.close()
            throw CohortError(.system, "cannot write the rejects file", at: .init(file: path), underlying: "\(code)")
        }
    }

    deinit {
        if !closed { try? descriptor.close() }
    }

    /// Appends one rejected row: its line number, the field at fault, the reason, and the row's
    /// values by column name (missing ones empty).
    package func write(line: Int, field: String, reason: String, fields: [String: String]) throws {
        if !wroteHeader {
            try put("line,field,reason," + columns.joined(separator: ",") + "\r\n")
            wroteHeader = true
        }
        let values = [String(line), field, reason] + columns.map { fields[$0] ?? "" }
        try put(values.map(CSVText.field).joined(separator: ",") + "\r\n")
    }

    /// Closes the file.
    package func close() throws {
        guard !closed else { return }
        closed = true
        do {
            try descriptor.close()
        } catch {
            throw CohortError(.system, "cannot finish the rejects file", at: .init(file: path), underlying: "\(error)")
        }
    }

    private func put(_ text: String) throws {
        do {
            _ = try descriptor.writeAll(Array(text.utf8))
        } catch {
            throw CohortError(.system, "cannot write the rejects file", at: .init(file: path), underlying: "\(error)")
        }
    }
}
