public import CohortCore
public import Foundation
import CohortImport

/// Writes a synthetic cohort — realistic fake identities and records — as the files a
/// coordinator would import (roster CSV, symptom CSV, wearable NDJSON, …). Deterministic from
/// the seed; every name, number and address is invented.
public struct DemoCohort: Sendable {

    public var seed: UInt64
    public var participants: Int
    public var days: Int
    /// The last day with data (yesterday, UTC).
    public var lastDay: CivilDate
    /// Local hours of the day with a heart-rate sample (the bulk of a wearable study's data):
    /// every 3 hours from 08:00 for the demo; every hour for the benchmark.
    public var heartRateHours: [Int] = Array(stride(from: 8, to: 23, by: 3))
    /// Minutes past each of `heartRateHours` with a heart-rate sample (a denser wearable).
    public var heartRateMinutes: [Int] = [0]

    public init(seed: UInt64, participants: Int, days: Int, lastDay: CivilDate) {
        self.seed = seed
        self.participants = participants
        self.days = days
        self.lastDay = lastDay
    }

    static let firstNames = [
        "Jane", "José", "Zoë", "Liam", "Aoife", "Mateo", "Chloé", "Noah", "Søren", "Amélie", "Kwame", "Priya", "Björn", "Lucía", "Oluwaseun",
        "Mei", "Élodie", "Rafael", "Ingrid", "Tomás", "Hannah", "Dmitri", "Fatima", "Connor", "Ana-Maria", "Yusuf", "Greta", "Matías",
    ]
    static let lastNames = [
        "Roe", "O'Brien", "García-López", "Nakamura", "Müller", "Okonkwo", "Smith-Jones", "Dubois", "Kowalczyk", "Fitzgerald", "Haddad",
        "Lindqvist", "Novák", "Ramírez", "Andersen", "MacLeod", "D'Angelo", "Petrov", "Whitfield", "Abernathy", "Castellanos",
    ]
    static let streets = ["Maple Street", "Oak Avenue", "Elm Road", "Harbor Drive", "Cedar Lane", "Willow Court", "Main St", "Lakeview Blvd"]
    static let zones = ["America/New_York", "America/Chicago", "America/Los_Angeles", "Europe/Berlin", "Asia/Kolkata", "Pacific/Auckland"]
    static let zips = ["02139", "10027", "60614", "94110", "03601", "05901", "20301", "82101", "89012", "30309", "98103", "55414"]
    static let devices = ["Apple Watch", "Fitbit Charge", "Garmin Venu"]

    /// The participants written to the roster: code, identity, time zone, enrollment date.
    public struct Person: Sendable {
        public var code: String
        public var first: String
        public var last: String
        public var entry: RosterEntry
        public var zone: TimeZone
        public var enrolledOn: CivilDate
        /// How likely they log on a given day (some low, to exercise compliance).
        public var adherence: Double
        public var device: String
    }

    public func people() -> [Person] {
        var rng = SeededRandom(seed: seed)
        return (1...max(participants, 1)).map { i in
            let first = rng.pick(Self.firstNames), last = rng.pick(Self.lastNames)
            let code = "P-" + String(format: "%04d", i)
            let birth = CivilDate(daysSinceEpoch: -5478 + Int(rng.next() % 17000))
            let tzName = rng.pick(Self.zones)
            // Most started a full study period ago; every fifth joined two months ago and is still taking part.
            let enrolled = i % 5 == 0 ? lastDay.adding(days: -min(59, days - 1)) : lastDay.adding(days: -(days - 1) - Int(rng.next() % 5))
            let device = rng.pick(Self.devices)
            let phone = String(format: "(%03d) %03d-%04d", 200 + Int(rng.next() % 700), 200 + Int(rng.next() % 700), Int(rng.next() % 10000))
            let entry = RosterEntry(
                code: code, name: "\(first) \(last)",
                email: "\(first.lowercased().folding(options: .diacriticInsensitive, locale: nil)).\(last.lowercased().filter(\.isLetter).folding(options: .diacriticInsensitive, locale: nil))\(i)@example.net",
                phone: phone, birthDate: birth.description, sex: rng.pick(["female", "male", "female", "male", "other"]),
                address: "\(10 + rng.next() % 980) \(rng.pick(Self.streets))", zip: rng.pick(Self.zips), mrn: "MRN" + String(format: "%08d", Int(rng.next() % 100_000_000)),
                timeZone: tzName, enrolledOn: enrolled.description, devices: ["\(first)'s \(device)"])
            let adherence = i % 7 == 0 ? 0.55 + rng.unit() * 0.2 : 0.82 + rng.unit() * 0.17
            return Person(code: code, first: first, last: last, entry: entry, zone: TimeZone(identifier: tzName) ?? .current, enrolledOn: enrolled,
                adherence: adherence, device: device)
        }
    }

    /// Files written, and how many records they hold.
    public struct Files: Sendable {
        public var roster: URL
        public var data: [URL]
        public var records: Int
    }

    /// Writes `roster.csv`, `symptoms.csv`, `wearable.ndjson`, `medications.csv`, `flares.csv` and
    /// `environment.csv` into `directory`.
    public func write(to directory: URL) throws -> Files {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let people = people()
        let roster = directory.appendingPathComponent("roster.csv")
        var text = RosterEntry.csvHeader.joined(separator: ",") + "\r\n"
        for p in people {
            let e = p.entry
            let cells = [e.code, e.name, e.email ?? "", e.phone ?? "", e.birthDate ?? "", e.sex ?? "", e.address ?? "", e.zip ?? "", e.mrn ?? "",
                e.timeZone, e.enrolledOn, e.devices.joined(separator: ";")]
            text += cells.map(CSVText.field).joined(separator: ",") + "\r\n"
        }
        try Data(text.utf8).write(to: roster)
        var rng = SeededRandom(seed: seed &+ 1)
        let header = RecordColumns.names.joined(separator: ",") + "\r\n"
        let symptoms = try LineFile(directory.appendingPathComponent("symptoms.csv"), header: header)
        let wearable = try LineFile(directory.appendingPathComponent("wearable.ndjson"), header: nil)
        let meds = try LineFile(directory.appendingPathComponent("medications.csv"), header: header)
        let flares = try LineFile(directory.appendingPathComponent("flares.csv"), header: header)
        let environment = try LineFile(directory.appendingPathComponent("environment.csv"), header: header)
        var count = 0
        let notes = [
            "stiff all morning, better after a hot shower", "slept badly, back pain woke me at 4", "{first}'s {device} needed charging, missed the afternoon",
            "called Dr. {last}'s office at {phone} about the injection", "walked with {first} {last} to the park", "tired today",
            "email me at {email} if the app breaks", "flare started after the long drive on 03/14", "", "", "", "",
        ]
        func csv(_ f: LineFile, _ cells: [String]) throws {
            try f.write(cells.map(CSVText.field).joined(separator: ",") + "\r\n")
            count += 1
        }
        for p in people {
            let baseline = 3 + rng.unit() * 3
            let hasNSAID = rng.unit() < 0.7
            var flareDays = 0
            for d in 0..<days {
                let day = p.enrolledOn.adding(days: d)
                guard day <= lastDay else { break }
                func at(_ hour: Int, _ minute: Int = 0) -> String {
                    let local = Int64(day.daysSinceEpoch) * 86_400_000 + Int64(hour * 3600 + minute * 60) * 1000
                    let offset = Timestamp.resolveOffset(localMs: local, in: p.zone)
                    return Timestamp(epochMilliseconds: local - Int64(offset) * 1000, utcOffsetSeconds: Int32(offset)).iso8601
                }
                if flareDays == 0, rng.unit() < 0.03 { flareDays = 2 + Int(rng.next() % 5) }
                let flare = flareDays > 0
                if flareDays > 0 { flareDays -= 1 }
                let severity = min(10, max(0, baseline + (flare ? 3 : 0) + rng.normal(mean: 0, sd: 1.2)))
                if rng.unit() < p.adherence {
                    let minute = Int(rng.next() % 50)
                    var note = rng.pick(notes)
                    note = note.replacingOccurrences(of: "{first}", with: p.first).replacingOccurrences(of: "{last}", with: p.last)
                        .replacingOccurrences(of: "{device}", with: p.device).replacingOccurrences(of: "{phone}", with: p.entry.phone ?? "")
                        .replacingOccurrences(of: "{email}", with: p.entry.email ?? "")
                    try csv(symptoms, [p.code, "pain", at(8, minute), "", String(format: "%.0f", severity), "{score}", "", "AxSpA app", note])
                    try csv(symptoms, [p.code, "morning_stiffness", at(8, minute), "", String(format: "%.0f", max(0, severity * 12 + rng.normal(mean: 0, sd: 10))), "min", "", "AxSpA app", ""])
                    try csv(symptoms, [p.code, "fatigue", at(8, minute), "", String(format: "%.0f", min(10, max(0, severity + rng.normal(mean: 0, sd: 1.5)))), "{score}", "", "AxSpA app", ""])
                    if day.isoWeekday == 7 {
                        try csv(symptoms, [p.code, "basdai", at(20), "", String(format: "%.1f", min(10, max(0, severity * 0.9))), "{score}", "", "AxSpA app", ""])
                    }
                }
                if rng.unit() < p.adherence + 0.05 {
                    func json(_ kind: String, _ start: String, _ end: String?, _ value: Double, _ unit: String) throws {
                        var object = "{\"participant\":\"\(p.code)\",\"kind\":\"\(kind)\",\"start\":\"\(start)\""
                        if let end { object += ",\"end\":\"\(end)\"" }
                        object += ",\"value\":\(value),\"unit\":\"\(unit)\",\"source\":\"\(p.device)\"}\n"
                        try wearable.write(object)
                        count += 1
                    }
                    let rhr = (62 + rng.normal(mean: 0, sd: 3) + (flare ? 5 : 0)).rounded()
                    try json("resting_heart_rate", at(7), nil, rhr, "/min")
                    try json("hrv_sdnn", at(7), nil, (45 + rng.normal(mean: 0, sd: 8) - (flare ? 8 : 0)).rounded(), "ms")
                    // The night starts at midnight and lasts exactly the reported hours, so the value
                    // never exceeds its period (and never starts before the enrollment day).
                    let sleepHours = max(0.5, ((7 + rng.normal(mean: 0, sd: 0.8)) * 10).rounded() / 10)
                    let sleepStart = Int64(day.daysSinceEpoch) * 86_400_000 - Int64(Timestamp.resolveOffset(localMs: Int64(day.daysSinceEpoch) * 86_400_000, in: p.zone)) * 1000
                    let sleepEnd = Date(timeIntervalSince1970: Double(sleepStart) / 1000 + (sleepHours * 3600).rounded())
                    // The end is the start plus the hours in elapsed time (a DST night is 23 or 25 h).
                    try json("sleep_duration", at(0), Timestamp(sleepEnd, in: p.zone).iso8601, sleepHours, "h")
                    try json("steps", at(0), at(23, 59), max(0, (6500 + rng.normal(mean: 0, sd: 2200) - (flare ? 2500 : 0)).rounded()), "{steps}")
                    for hour in heartRateHours {
                        for minute in heartRateMinutes {
                            try json("heart_rate", at(hour, minute), nil, (rhr + 15 + rng.normal(mean: 0, sd: 9)).rounded(), "/min")
                        }
                    }
                }
                if hasNSAID, rng.unit() < 0.8 { try csv(meds, [p.code, "medication_dose", at(9), "", "500", "mg", "naproxen", "AxSpA app", ""]) }
                if d % 14 == 3 { try csv(meds, [p.code, "medication_dose", at(19), "", "40", "mg", "adalimumab", "AxSpA app", ""]) }
                if flare, flareDays == 0 || d == 0 {
                    try csv(flares, [p.code, "flare", at(6), at(21), String(format: "%.0f", min(10, severity + 1)), "{score}", "", "AxSpA app", "flare, hips and lower back"])
                }
                try csv(environment, [p.code, "barometric_pressure", at(12), "", String(format: "%.1f", 1013 + rng.normal(mean: 0, sd: 8)), "hPa", "", "Weather service", ""])
                try csv(environment, [p.code, "ambient_temperature", at(12), "", String(format: "%.1f", 14 + rng.normal(mean: 0, sd: 7)), "Cel", "", "Weather service", ""])
                try csv(environment, [p.code, "relative_humidity", at(12), "", String(format: "%.0f", min(100, max(5, 60 + rng.normal(mean: 0, sd: 15)))), "%", "", "Weather service", ""])
            }
        }
        for f in [symptoms, wearable, meds, flares, environment] { try f.close() }
        return Files(roster: roster, data: [symptoms.url, wearable.url, meds.url, flares.url, environment.url], records: count)
    }
}

/// A buffered text file writer for generated data.
final class LineFile {
    let url: URL
    let handle: FileHandle
    var buffer = Data()

    init(_ url: URL, header: String?) throws {
        guard FileManager.default.createFile(atPath: url.path, contents: nil, attributes: [.posixPermissions: 0o600]),
            let handle = FileHandle(forWritingAtPath: url.path)
        else { throw CohortError(.system, "cannot write the file", at: .init(file: url.path)) }
        self.url = url
        self.handle = handle
        if let header { buffer.append(contentsOf: header.utf8) }
    }

    func write(_ text: String) throws {
        buffer.append(contentsOf: text.utf8)
        if buffer.count > 1 << 16 {
            try handle.write(contentsOf: buffer)
            buffer.removeAll(keepingCapacity: true)
        }
    }

    func close() throws {
        try handle.write(contentsOf: buffer)
        buffer.removeAll()
        try handle.close()
    }
}
