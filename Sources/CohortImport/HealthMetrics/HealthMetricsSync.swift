import CohortIO
import CohortCore
package import Foundation

/// Reads the sync API's JSON batch bodies: a file holding one body, or NDJSON with one body per
/// line. A body is `{"userId","source","deviceType","timezone","records":[{"recordedAt",
/// "metrics":{"steps":…,"heartRateAvg":…}}]}`; `userId` is the one key the API itself does not
/// post (it comes from the request's authentication), so the coordinator's log of bodies must
/// add it. `deviceType` is not imported (device strings can carry a person's name).
package enum HealthMetricsSync {
    /// The largest file read whole (a single body); NDJSON files are read line by line.
    package static let maxBodyBytes = 256 << 20

    /// Calls `body` with each record of each batch body; `tally` with the reason for each
    /// non-null value of a metric key cohort does not know (counted, never dropped silently).
    package static func forEachDay(url: URL, tally: ((String) -> Void)? = nil, _ body: (HealthMetricsDay) throws -> Void) throws {
        let file = url.path
        if url.pathExtension.lowercased() == "json" {
            let size = (try? FileManager.default.attributesOfItem(atPath: file)[.size] as? NSNumber)?.intValue ?? 0
            guard size <= maxBodyBytes else {
                throw CohortError.invalid("the file is larger than \(maxBodyBytes >> 20) MiB", file: file, hint: "write one body per line (.ndjson)")
            }
            guard let data = FileManager.default.contents(atPath: file) else { throw CohortError(.notFound, "cannot read the file", at: .init(file: file)) }
            try batch(data, file: file, line: 1, tally: tally, body)
        } else {
            try LineReader.forEachLine(of: url, maxLineBytes: maxBodyBytes) { line, bytes in
                if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { return }
                try batch(Data(bytes), file: file, line: line, tally: tally, body)
            }
        }
    }

    static func batch(_ data: Data, file: String, line: Int, tally: ((String) -> Void)?, _ body: (HealthMetricsDay) throws -> Void) throws {
        guard let object = try? JSONSerialization.jsonObject(with: data), let batch = object as? [String: Any] else {
            throw CohortError.invalid("expected a JSON object (a sync batch body)", file: file, line: line,
                hint: "{\"userId\":…,\"source\":…,\"timezone\":…,\"records\":[{\"recordedAt\":…,\"metrics\":{…}}]}")
        }
        guard let user = text(batch["userId"]) else {
            throw CohortError.invalid("the body has no userId", file: file, line: line, field: "userId",
                hint: "add the user id the API authenticated the body with")
        }
        let source = text(batch["source"]), zone = text(batch["timezone"])
        guard let records = batch["records"] as? [Any] else {
            throw CohortError.invalid("expected an array of records", file: file, line: line, field: "records")
        }
        for (i, item) in records.enumerated() {
            guard let record = item as? [String: Any] else {
                throw CohortError.invalid("expected an object", file: file, line: line, field: "records[\(i)]")
            }
            guard let day = text(record["recordedAt"]) else {
                throw CohortError.invalid("expected a date", file: file, line: line, field: "records[\(i)].recordedAt")
            }
            var metrics: [(HealthMetric, String)] = []
            for (key, value) in (record["metrics"] as? [String: Any]) ?? [:] {
                if value is NSNull { continue }
                guard let metric = HealthMetric.bySyncName[key] else {
                    tally?("metric not imported: \(key)")
                    continue
                }
                guard let number = value as? NSNumber, String(cString: number.objCType) != "c" else {
                    throw CohortError.invalid("expected a number", file: file, line: line, field: "records[\(i)].metrics.\(key)")
                }
                metrics.append((metric, number.stringValue))
            }
            metrics.sort { $0.0.rawValue < $1.0.rawValue }
            try body(
                HealthMetricsDay(
                    userID: user, recordedAt: day, source: source, timeZone: zone, metrics: metrics, file: file, line: line,
                    fieldName: { "records[\(i)].metrics.\($0.syncName)" }))
        }
    }

    static func text(_ value: Any?) -> String? {
        switch value {
        case let s as String: s.isEmpty ? nil : s
        case let n as NSNumber: n.stringValue
        default: nil
        }
    }
}
