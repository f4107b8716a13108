import CohortCore

/// The columns of one exported table, decided by the de-identification policy: a column exists
/// only when a rule names its field with a transform other than `drop`.
struct TableLayout: Sendable {
    /// The file name without extension (`participants`, `biometrics`).
    var name: String
    var description: String
    var columns: [TableColumn]
    /// The family for record tables, nil for participants and consents.
    var dataType: DataType?
    /// The kinds a record table holds (the protocol's collected kinds of its family).
    var kinds: [RecordKind] = []

    /// Whether the table has a column called `name`.
    func has(_ name: String) -> Bool { columns.contains { $0.name == name } }

    /// The transform behind column `name`, if the column exists.
    func transform(of name: String) -> Transform? { columns.first { $0.name == name }?.transform }

    // MARK: - Layouts

    static func participants(policy: DeidentificationPolicy) -> TableLayout {
        var columns = [pseudonymColumn(policy: policy, table: "participant", primary: true)]
        func setPattern(_ name: String, _ pattern: String) {
            if let index = columns.firstIndex(where: { $0.name == name }), columns[index].transform != .generalize { columns[index].pattern = pattern }
        }
        func add(_ field: String, _ name: String, _ type: ColumnType, _ description: String, allowed: [String]? = nil) {
            guard let transform = kept(policy, "participant", field) else { return }
            columns.append(
                TableColumn(
                    name: name, type: type, transform: transform, description: description,
                    allowedValues: transform == .generalize ? nil : allowed))
        }
        // Under k-anonymity a column may be generalized to ranges and periods (`1980–1984`,
        // `2025-Q1`), so its type is string whatever the cohort turns out to need.
        let generalizable = policy.kAnonymity != nil
        add("sex", "sex", .string, "Administrative sex recorded at enrollment", allowed: Sex.allCases.map(\.rawValue))
        add(
            "birth_date", "birth_year", generalizable ? .string : .year,
            generalizable
                ? "Year of birth, or a 5- or 10-year range (1980–1984) where generalized for k-anonymity; empty for participants aged 90 or over or where suppressed"
                : "Year of birth; empty for participants aged 90 or over")
        add("age", "age_band", .string, "Age band at enrollment (90+ at the top)")
        add("zip", "zip3", .string, "First three digits of the ZIP code (000 for restricted prefixes); a region (9**) where generalized for k-anonymity")
        setPattern("zip3", #"^[0-9][0-9*]{2}$"#)
        add(
            "enrolled_on", "enrolled_on", generalizable ? .string : .date,
            generalizable
                ? "Enrollment date, shifted by the participant's date offset; a month (2025-03), quarter (2025-Q1) or year where generalized for k-anonymity"
                : "Enrollment date, shifted by the participant's date offset")
        add("status", "status", .string, "Participation status", allowed: ParticipantStatus.allCases.map(\.rawValue))
        if kept(policy, "participant", "status") != nil, let transform = kept(policy, "participant", "enrolled_on") {
            columns.append(
                TableColumn(
                    name: "withdrawn_at", type: generalizable ? .string : .datetime, transform: transform,
                    description: generalizable
                        ? "Withdrawal instant (ISO 8601 with offset), shifted like every date of the participant; a month, quarter or year where generalized for k-anonymity"
                        : "Withdrawal instant (ISO 8601 with offset), shifted like every date of the participant"))
        }
        add("time_zone", "time_zone", .string, "Time zone, generalized")
        add("devices", "devices", .string, "Device groups, separated by ';' in CSV (an array in JSON)")
        if policy.publishesUTCOffset {
            columns.append(
                TableColumn(
                    name: "utc_offset", type: .string, transform: .keep,
                    description: "The one UTC offset (+hh:mm) every published time of the participant is written at",
                    pattern: #"^[+-][0-9]{2}:[0-9]{2}$"#))
        }
        return TableLayout(name: "participants", description: "One row per exported participant", columns: columns)
    }

    static func consents(policy: DeidentificationPolicy, scopes: [SharingScope] = SharingScope.builtIn.keys.sorted()) -> TableLayout {
        var columns = [pseudonymColumn(policy: policy, table: "consent", primary: false)]
        func add(_ field: String, _ type: ColumnType, _ description: String, allowed: [String]? = nil) {
            guard let transform = kept(policy, "consent", field) else { return }
            columns.append(
                TableColumn(
                    name: field, type: type, transform: transform, description: description,
                    allowedValues: transform == .generalize ? nil : allowed))
        }
        add("version", .string, "Consent document version signed")
        add("document_sha256", .string, "SHA-256 (hex) of the exact consent document text")
        if let index = columns.firstIndex(where: { $0.name == "document_sha256" }) { columns[index].pattern = "^[0-9a-f]{64}$" }
        add("signed_at", .datetime, "Signing instant (ISO 8601 with offset), shifted")
        add("sharing", .string, "Sharing scope agreed to", allowed: scopes.map(\.rawValue))
        add("status", .string, "Consent status (history is kept: re-consent supersedes)", allowed: ConsentStatus.allCases.map(\.rawValue))
        return TableLayout(name: "consents", description: "Consent history, one row per consent event", columns: columns)
    }

    /// `keptMetadata`: the Apple Health metadata keys the protocol keeps (they arrive in the note,
    /// so the note column's description says how).
    static func family(_ type: DataType, kinds: [RecordKind], policy: DeidentificationPolicy, keptMetadata: [String] = []) -> TableLayout {
        let table = type.rawValue
        let kinds = kinds.sorted()
        var columns = [pseudonymColumn(policy: policy, table: table, primary: false)]
        columns.append(
            TableColumn(
                name: "kind", type: .string, transform: policy.rule(table: table, field: "kind")?.transform ?? .keep,
                description: "Record kind (see the kind rows of this codebook)", allowedValues: kinds.map(\.rawValue), required: true))
        func add(_ field: String, _ name: String, _ type: ColumnType, _ description: String) {
            guard let transform = kept(policy, table, field) else { return }
            columns.append(TableColumn(name: name, type: type, transform: transform, description: description))
        }
        add("start", "start", .datetime, "Effective start (ISO 8601 with offset), shifted")
        add("end", "end", .datetime, "Effective end (ISO 8601 with offset), shifted; empty for point measurements")
        if let transform = kept(policy, table, "value") {
            if transform == .generalize {
                columns.append(
                    TableColumn(name: "value_label", type: .string, transform: transform, description: "Value bin label (generalized)"))
            } else {
                let integral = !kinds.isEmpty && kinds.allSatisfy(\.isInteger)
                columns.append(
                    TableColumn(
                        name: "value", type: integral ? .integer : .number, transform: transform,
                        description: "Value in the kind's canonical UCUM unit",
                        minimum: kinds.map(\.range.lowerBound).min(), maximum: kinds.map(\.range.upperBound).max()))
            }
        }
        add("unit", "unit", .string, "UCUM unit of value")
        add("text", "text", .string, type == .medicationLog ? "Medication name" : "Text value (e.g. migraine triggers separated by ';')")
        add("source", "source", .string, "Data source (app or device group)")
        add(
            "note", "note", .string,
            keptMetadata.isEmpty
                ? "Free-text note with identifiers replaced by typed tokens"
                : "Free-text note with identifiers replaced by typed tokens; for Apple Health samples, the metadata the protocol keeps as key=value entries separated by '; ' (keys: \(keptMetadata.joined(separator: ", ")))")
        return TableLayout(
            name: type.tableName, description: "Records of the \(table) family, one row per record", columns: columns,
            dataType: type, kinds: kinds)
    }

    /// The kinds whose overlap-free daily totals the export can publish: cumulative kinds the
    /// protocol collects whose values are kept as they are and whose start is shifted or kept
    /// (a generalized value or a year-only start has no day total to publish).
    static func dailyTotalKinds(_ studyProtocol: StudyProtocol) -> [RecordKind] {
        let policy = studyProtocol.deidentification
        return DailyTotals.cumulativeKinds.filter { kind in
            let table = kind.dataType.rawValue
            guard studyProtocol.collects(kind), policy.rule(table: table, field: "value")?.transform == .keep else { return false }
            let start = policy.rule(table: table, field: "start")?.transform
            return start == .shift || start == .keep
        }.sorted()
    }

    /// `daily_totals`: per participant, cumulative kind and local day, the overlap-free total of
    /// the published records (``DailyTotals``), nil when no kind qualifies (``dailyTotalKinds(_:)``).
    static func dailyTotals(_ studyProtocol: StudyProtocol) -> TableLayout? {
        let kinds = dailyTotalKinds(studyProtocol)
        guard let first = kinds.first else { return nil }
        let policy = studyProtocol.deidentification
        let startTransform = policy.rule(table: first.dataType.rawValue, field: "start")?.transform ?? .shift
        let columns = [
            pseudonymColumn(policy: policy, table: first.dataType.rawValue, primary: false),
            TableColumn(
                name: "kind", type: .string, transform: .keep, description: "Record kind (a cumulative one; see the kind rows of this codebook)",
                allowedValues: kinds.map(\.rawValue), required: true),
            TableColumn(
                name: "date", type: .date, transform: startTransform,
                description: "Local calendar day at the participant's published UTC offset, shifted like every date of the participant",
                required: true),
            TableColumn(
                name: "value", type: .number, transform: .keep,
                description: "The day's total in the kind's unit, each minute counted once: where sources overlap, the higher-ranked one counts (the protocol's source_priority, else watch, phone, other); a sample's value is spread over its interval (3 decimals)",
                required: true),
            TableColumn(name: "unit", type: .string, transform: .keep, description: "UCUM unit of value", required: true),
            TableColumn(name: "samples", type: .integer, transform: .keep, description: "Published records that contributed to the total", required: true),
        ]
        return TableLayout(
            name: "daily_totals", description: "Overlap-free daily totals of cumulative kinds (steps, distance, flights, energy, exercise time)",
            columns: columns, dataType: nil, kinds: [])
    }

    private static func kept(_ policy: DeidentificationPolicy, _ table: String, _ field: String) -> Transform? {
        guard let rule = policy.rule(table: table, field: field), rule.transform != .drop else { return nil }
        return rule.transform
    }

    private static func pseudonymColumn(policy: DeidentificationPolicy, table: String, primary: Bool) -> TableColumn {
        let transform =
            policy.rule(table: table, field: "participant")?.transform ?? policy.rule(table: "participant", field: "id")?.transform
            ?? .pseudonymize
        return TableColumn(
            name: "pseudonym", type: .string, transform: transform,
            description: primary
                ? "Participant pseudonym, specific to the recipient (stable across their exports)"
                : "Participant pseudonym (foreign key to participants)", required: true,
            pattern: transform == .pseudonymize ? "^[A-Z2-7]{16}$" : nil)
    }

    // MARK: - Rows

    func row(_ p: DeidentifiedParticipant) -> [Cell] {
        columns.map { column in
            switch column.name {
            case "pseudonym": .string(p.pseudonym)
            case "sex": p.sex.map { .string($0.rawValue) } ?? .null
            case "birth_year":
                if let range = p.birthYearRange { .string(range) } else if let year = p.birthYear { column.type == .string ? .string(String(year)) : .integer(year) } else { .null }
            case "age_band": p.ageBand.map { .string($0) } ?? .null
            case "zip3": p.zip3.map { .string($0) } ?? .null
            case "enrolled_on":
                if let period = p.enrollmentPeriod { .string(period) } else if let date = p.enrolledOn { column.type == .string ? .string(date.description) : .date(date) } else { .null }
            case "status": p.status.map { .string($0.rawValue) } ?? .null
            case "withdrawn_at":
                if let period = p.withdrawalPeriod { .string(period) } else if let instant = p.withdrawnAt { column.type == .string ? .string(instant.iso8601) : .timestamp(instant) } else { .null }
            case "time_zone": p.timeZone.map { .string($0) } ?? .null
            case "devices": p.devices.map { .list($0) } ?? .null
            case "utc_offset": p.utcOffset.map { .string($0) } ?? .null
            default: .null
            }
        }
    }

    func row(_ c: DeidentifiedConsent) -> [Cell] {
        columns.map { column in
            switch column.name {
            case "pseudonym": .string(c.pseudonym)
            case "version": c.version.map { .string($0) } ?? .null
            case "document_sha256": c.documentSHA256.map { .string($0) } ?? .null
            case "signed_at": c.signedAt.map { .timestamp($0) } ?? .null
            case "sharing": c.sharing.map { .string($0) } ?? .null
            case "status": c.status.map { .string($0) } ?? .null
            default: .null
            }
        }
    }

    func row(_ r: DeidentifiedRecord) -> [Cell] {
        columns.map { Self.cell(RecordField(column: $0), of: r) }
    }

    /// What a record table's column shows, resolved from its name once per table rather than
    /// once per row.
    enum RecordField: Sendable {
        case pseudonym, kind, start, end, value(integerColumn: Bool), valueLabel, unit, text, source, note, none

        init(column: TableColumn) {
            switch column.name {
            case "pseudonym": self = .pseudonym
            case "kind": self = .kind
            case "start": self = .start
            case "end": self = .end
            case "value": self = .value(integerColumn: column.type == .integer)
            case "value_label": self = .valueLabel
            case "unit": self = .unit
            case "text": self = .text
            case "source": self = .source
            case "note": self = .note
            default: self = .none
            }
        }
    }

    /// The cell of record `r` in a column showing `field`.
    static func cell(_ field: RecordField, of r: DeidentifiedRecord) -> Cell {
        switch field {
        case .pseudonym: .string(r.pseudonym)
        case .kind: .string(r.kind.rawValue)
        case .start: r.start.map { .timestamp($0) } ?? .null
        case .end: r.end.map { .timestamp($0) } ?? .null
        case .value(let integerColumn): Cell.numeric(r.value, integral: integerColumn || r.kind.isInteger)
        case .valueLabel: r.valueLabel.map { .string($0) } ?? .null
        case .unit: r.unit.map { .string($0) } ?? .null
        case .text: r.text.map { .string($0) } ?? .null
        case .source: r.source.map { .string($0) } ?? .null
        case .note: r.note.map { .string($0) } ?? .null
        case .none: .null
        }
    }
}
