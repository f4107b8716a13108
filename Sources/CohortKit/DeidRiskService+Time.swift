import CohortCore
public import CohortDeid
import CohortIO
public import Foundation

extension DeidRiskService {
    /// Tables of a bag's `data/csv` that hold no records.
    static let nonRecordTables: Set<String> = ["participants.csv", "consents.csv", "codebook.csv"]

    /// Runs the time attacks and k over what an acquaintance knows on the bag's published files
    /// (issue 27), adding their outcomes to `assessment`.
    static func assessTime(
        _ assessment: inout DeidRiskAssessment, bag: URL, report: ReportFile, participants: (header: [String], rows: [[String]]),
        quasiIdentifiers: [String], archive: WeatherArchive? = nil
    ) throws {
        let timelines = try readTimelines(bag)
        let keyColumn = participants.header.firstIndex(of: "pseudonym")
        let offsets = offsets(participants.header, participants.rows)
        let dateShift = report.dateShift
        let keywords = ["holiday": "holiday", "embargo": "freshness", "exogenous": "exogenous", "daylight": "dst"]
        assessment.statedSignals = (dateShift?.recoverableSignals ?? []).compactMap { statement in
            keywords.first { statement.contains($0.key) }?.value
        }
        assessment.unattackedSignals = (dateShift?.recoverableSignals ?? []).filter { statement in !keywords.keys.contains { statement.contains($0) } }
        if let range = dateShift?.rangeDays, range.count == 2, range[0] <= range[1], !timelines.isEmpty {
            let attacks = TimeAttacks(
                range: range[0]...range[1], wholeWeeks: dateShift?.wholeWeeks == true, createdDay: try baggingDay(bag), timelines: timelines,
                offsets: offsets, otherInstants: try otherInstants(bag, participants: participants), archive: archive)
            assessment.timeAttacks = attacks.outcomes
        }
        // k over the participant columns plus what an acquaintance knows from the records. With
        // no published record (an embargo can leave every one out) the acquaintance learns
        // nothing from records: every profile is empty and k is the participant columns' k —
        // still stated, so the check against the manifest's record k holds on such bags too.
        guard let keyColumn else { return }
        let weekdayKept = dateShift?.rangeDays == nil || dateShift?.wholeWeeks == true
        let attributes = AcquaintanceProfile.attributes(weekdayKept: weekdayKept)
        assessment.acquaintanceAttributes = attributes
        let indices = quasiIdentifiers.compactMap { participants.header.firstIndex(of: $0) }
        var rows: [[String]] = []
        var keys: [String] = []
        for row in participants.rows where keyColumn < row.count {
            let pseudonym = row[keyColumn]
            var profile = AcquaintanceProfile()
            for record in timelines[pseudonym] ?? [] {
                profile.add(kind: record.kind, startMs: record.start, offsetSeconds: record.offsetSeconds, source: record.source)
            }
            rows.append(indices.map { $0 < row.count ? row[$0] : "" } + profile.values(weekdayKept: weekdayKept))
            keys.append(pseudonym)
        }
        let extended = ReidentificationRisk(quasiIdentifiers: quasiIdentifiers + attributes, rows: rows, keys: keys, sensitive: [])
        assessment.acquaintanceK = extended.k
        assessment.acquaintanceKOnlyStated = report.kAnonymity?.recordAttributesEnforced == false
        if let requested = assessment.requestedK, let k = extended.k, k < requested {
            assessment.warnings.append("k over the quasi-identifiers plus what an acquaintance knows (\(attributes.joined(separator: ", "))) is \(k), below the requested \(requested)")
        }
    }

    /// Every participant's published records (pseudonym → rows), from the record tables of the
    /// bag's `data/csv`.
    static func readTimelines(_ bag: URL) throws -> [String: [TimeAttacks.Row]] {
        let csv = bag.appendingPathComponent("data/csv")
        let files = ((try? FileManager.default.contentsOfDirectory(atPath: csv.path)) ?? []).filter {
            $0.hasSuffix(".csv") && !nonRecordTables.contains($0)
        }.sorted()
        var timelines: [String: [TimeAttacks.Row]] = [:]
        for file in files {
            let shown = "data/csv/\(file)"
            let reader = try CSVReader(url: csv.appendingPathComponent(file))
            guard let header = try reader.next()?.fields else { continue }
            guard let p = header.firstIndex(of: "pseudonym"), let k = header.firstIndex(of: "kind"), let s = header.firstIndex(of: "start")
            else { continue }
            let e = header.firstIndex(of: "end"), v = header.firstIndex(of: "value"), src = header.firstIndex(of: "source")
            while let row = try reader.next() {
                let f = row.fields
                guard f.count == header.count else {
                    throw CohortError(.invalidInput, "expected \(header.count) fields, found \(f.count)", at: .init(file: shown, line: row.line))
                }
                guard !f[s].isEmpty, let start = Timestamp.parse(f[s], defaultTimeZone: nil) else { continue }
                let end = e.flatMap { f[$0].isEmpty ? nil : Timestamp.parse(f[$0], defaultTimeZone: nil) }
                timelines[f[p], default: []].append(
                    TimeAttacks.Row(
                        kind: f[k], start: start.epochMilliseconds, end: end?.epochMilliseconds, offsetSeconds: start.utcOffsetSeconds,
                        value: v.flatMap { Double(f[$0]) }, source: src.map { f[$0] }))
            }
        }
        return timelines
    }

    /// The participants' published offsets (`utc_offset`), by pseudonym.
    static func offsets(_ header: [String], _ rows: [[String]]) -> [String: Int32] {
        var offsets: [String: Int32] = [:]
        if let key = header.firstIndex(of: "pseudonym"), let o = header.firstIndex(of: "utc_offset") {
            for row in rows where o < row.count && key < row.count { offsets[row[key]] = offsetSeconds(row[o]) }
        }
        return offsets
    }

    /// The time attacks on the bag folder `bag` (nil when the report states no shift range),
    /// the exogenous one aligned with `archive` when given.
    static func timeAttacks(bag: URL, archive: WeatherArchive? = nil) throws -> TimeAttacks? {
        let report = try readReportFile(bag.appendingPathComponent(reportPath), shownAs: reportPath)
        let (header, rows) = try readCSV(bag.appendingPathComponent(participantsPath), shownAs: participantsPath)
        let timelines = try readTimelines(bag)
        guard let range = report.dateShift?.rangeDays, range.count == 2, range[0] <= range[1] else { return nil }
        return TimeAttacks(
            range: range[0]...range[1], wholeWeeks: report.dateShift?.wholeWeeks == true, createdDay: try baggingDay(bag), timelines: timelines,
            offsets: offsets(header, rows), otherInstants: try otherInstants(bag, participants: (header, rows)), archive: archive)
    }

    /// Published instants besides records, by pseudonym: consents' `signed_at` and participants'
    /// `withdrawn_at` (what the freshness attack also bounds the shift with).
    static func otherInstants(_ bag: URL, participants: (header: [String], rows: [[String]])) throws -> [String: [Int64]] {
        var result: [String: [Int64]] = [:]
        if let key = participants.header.firstIndex(of: "pseudonym"), let w = participants.header.firstIndex(of: "withdrawn_at") {
            for row in participants.rows where key < row.count && w < row.count {
                if let instant = Timestamp.parse(row[w], defaultTimeZone: nil) { result[row[key], default: []].append(instant.epochMilliseconds) }
            }
        }
        let consents = bag.appendingPathComponent("data/csv/consents.csv")
        guard FileManager.default.fileExists(atPath: consents.path) else { return result }
        let reader = try CSVReader(url: consents)
        guard let header = try reader.next()?.fields, let key = header.firstIndex(of: "pseudonym"), let s = header.firstIndex(of: "signed_at") else {
            return result
        }
        while let row = try reader.next() {
            guard key < row.fields.count, s < row.fields.count, let instant = Timestamp.parse(row.fields[s], defaultTimeZone: nil) else { continue }
            result[row.fields[key], default: []].append(instant.epochMilliseconds)
        }
        return result
    }

    /// A public weather archive from a CSV file with the columns `station`, `kind` (an
    /// environment kind, e.g. `barometric_pressure`), `date` (YYYY-MM-DD) and `value`: one row
    /// per station, kind and day.
    ///
    /// - Throws: `CohortError` naming the file, line and column of a row it cannot read (never
    ///   the value).
    public static func readWeatherArchive(_ url: URL) throws -> WeatherArchive {
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw CohortError(.notFound, "no such weather archive", at: .init(file: url.path), hint: "give a CSV file with station,kind,date,value")
        }
        let reader = try CSVReader(url: url)
        let header = try reader.next()?.fields ?? []
        let columns = ["station", "kind", "date", "value"].map { header.firstIndex(of: $0) }
        guard let s = columns[0], let k = columns[1], let d = columns[2], let v = columns[3] else {
            throw CohortError(
                .invalidInput, "the weather archive's header lacks a column", at: .init(file: url.path, line: 1),
                hint: "expected the columns station, kind, date and value")
        }
        var series: [String: [String: [Int: Double]]] = [:]
        while let row = try reader.next() {
            let f = row.fields
            guard f.count == header.count else {
                throw CohortError(.invalidInput, "expected \(header.count) fields, found \(f.count)", at: .init(file: url.path, line: row.line))
            }
            let parts = f[d].split(separator: "-").compactMap { Int($0) }
            guard parts.count == 3, let date = CivilDate(year: parts[0], month: parts[1], day: parts[2]) else {
                throw CohortError(.invalidInput, "expected a date (YYYY-MM-DD)", at: .init(file: url.path, line: row.line, field: "date"))
            }
            guard let value = Double(f[v]), value.isFinite else {
                throw CohortError(.invalidInput, "expected a number", at: .init(file: url.path, line: row.line, field: "value"))
            }
            series[f[s], default: [:]][f[k], default: [:]][date.daysSinceEpoch] = value
        }
        return WeatherArchive(series: series)
    }

    /// `+05:30` → 19800; nil for anything else.
    static func offsetSeconds(_ text: String) -> Int32? {
        let scalars = Array(text.utf8)
        guard scalars.count == 6, scalars[0] == UInt8(ascii: "+") || scalars[0] == UInt8(ascii: "-"), scalars[3] == UInt8(ascii: ":"),
            let hours = Int32(text.dropFirst().prefix(2)), let minutes = Int32(text.suffix(2))
        else { return nil }
        return (scalars[0] == UInt8(ascii: "-") ? -1 : 1) * (hours * 3600 + minutes * 60)
    }

    /// The day (since 1970, UTC) of bag-info.txt's `Bagging-Date`; nil when absent.
    static func baggingDay(_ bag: URL) throws -> Int? {
        guard let data = FileManager.default.contents(atPath: bag.appendingPathComponent("bag-info.txt").path) else { return nil }
        for line in String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline) where line.hasPrefix("Bagging-Date:") {
            let value = line.dropFirst("Bagging-Date:".count).trimmingCharacters(in: .whitespaces)
            let parts = value.split(separator: "-").compactMap { Int($0) }
            guard parts.count == 3, let date = CivilDate(year: parts[0], month: parts[1], day: parts[2]) else { return nil }
            return date.daysSinceEpoch
        }
        return nil
    }
}
