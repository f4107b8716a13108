/// The protocol's de-identification section: an allow-list naming every exported field with a
/// transform. A field no rule names is dropped and reported, never passed through.
public struct DeidentificationPolicy: Sendable, Hashable, Codable {
    package var dateShift: DateShift
    package var kAnonymity: KAnonymity?
    /// `table.field` → rule. Tables: `participant`, `consent`, a data type (`symptom_log`), or
    /// `records` for a rule every data type shares (a data type's own rule wins).
    public var fields: [String: FieldRule]

    package init(dateShift: DateShift, kAnonymity: KAnonymity?, fields: [String: FieldRule]) {
        self.dateShift = dateShift
        self.kAnonymity = kAnonymity
        self.fields = fields
    }

    /// The rule for `field` of `table`, or nil when none names it (the field is then dropped).
    public func rule(table: String, field: String) -> FieldRule? {
        if let rule = fields["\(table).\(field)"] { return rule }
        if DataType(rawValue: table) != nil { return fields["records.\(field)"] }
        return nil
    }

    /// The tables a rule may name.
    public static var tables: [String] { ["participant", "consent", "records"] + DataType.allCases.map(\.rawValue) }

    /// The fields `table` has, or nil for an unknown table.
    package static func fieldNames(of table: String) -> [String]? {
        switch table {
        case "participant": ParticipantField.allCases.map(\.rawValue)
        case "consent": ConsentField.allCases.map(\.rawValue)
        case "records": RecordField.allCases.map(\.rawValue)
        default: DataType(rawValue: table) == nil ? nil : RecordField.allCases.map(\.rawValue)
        }
    }

    /// Every `table.field` an export of `studyProtocol` can contain (participant, consent, and each
    /// collected data type's record fields).
    package static func exportableFields(of studyProtocol: StudyProtocol) -> [String] {
        var result = ParticipantField.allCases.map { "participant.\($0.rawValue)" }
        result += ConsentField.allCases.map { "consent.\($0.rawValue)" }
        for type in studyProtocol.dataTypes.keys.sorted() {
            result += RecordField.allCases.map { "\(type.rawValue).\($0.rawValue)" }
        }
        return result
    }

    /// Exportable fields no rule names: these are dropped at export and listed in the report.
    package func unruledFields(of studyProtocol: StudyProtocol) -> [String] {
        Self.exportableFields(of: studyProtocol).filter { name in
            guard let dot = name.firstIndex(of: ".") else { return true }
            return rule(table: String(name[..<dot]), field: String(name[name.index(after: dot)...])) == nil
        }
    }

    /// The transforms that make sense for a field (`zip3` only for ZIP codes, `shift` only for dates…).
    package static func allowedTransforms(table: String, field: String) -> Set<Transform> {
        var allowed: Set<Transform> = [.keep, .drop]
        switch (table, field) {
        case ("participant", "id"), (_, "participant"): allowed.insert(.pseudonymize)
        case ("participant", "birth_date"): allowed.formUnion([.year, .shift])
        case ("participant", "enrolled_on"), ("consent", "signed_at"), (_, "start"), (_, "end"):
            allowed.formUnion([.shift, .year])
        case ("participant", "zip"): allowed.formUnion([.zip3, .generalize])
        case ("participant", "age"): allowed.formUnion([.ageBand, .generalize])
        case (_, "note"), (_, "text"), ("participant", "address"): allowed.formUnion([.scrub, .generalize])
        case (_, "value"): allowed.insert(.generalize)
        case (_, "source"), ("participant", "devices"), ("participant", "time_zone"): allowed.formUnion([.generalize, .scrub])
        default: break
        }
        return allowed
    }

    /// Date shifting settings, and what else keeps time from giving the shift away
    /// (docs/deidentification.md, "Time").
    public struct DateShift: Sendable, Hashable, Codable {
        /// Offsets fall within ±`maxDays` (and are never 0 unless `maxDays` is 0).
        package var maxDays: Int
        /// Shift by whole weeks only, so weekdays are kept. Holiday alignment recovers such
        /// shifts from a daily activity series: protocols that publish one should shift by days.
        package var wholeWeeks: Bool
        /// Nothing is published dated after the export's creation minus this many days (0: after
        /// the creation). With `embargoDays = maxDays` every participant whose data run up to the
        /// export has their published data end at the same horizon, whatever their shift, so the
        /// last record says nothing; with less, a participant shifted further back than the
        /// embargo has their last record at the creation plus their shift.
        package var embargoDays: Int
        /// What happens to records of exogenous kinds (public series such as the weather, which
        /// a public archive dates): left out, or published with shifted dates.
        public var exogenous: Exogenous
        /// Kinds, besides the `environment` data type's, that the protocol marks exogenous.
        package var exogenousKinds: [RecordKind]
        /// Whether day totals (records about a day long) on the public holidays of the
        /// participant's region are masked: their value replaced by the same weekday's a week
        /// before, give or take 10%, so holiday dips do not align with a public calendar.
        package var maskHolidays: Bool

        /// Records of exogenous kinds on export.
        public enum Exogenous: String, Sendable, Hashable, Codable {
            /// Left out of the export and counted (the default): matched against a public
            /// archive, a dated series gives the shift — and the place — away.
            case drop
            /// Published with shifted dates like any record: the shift is recoverable.
            case dated
        }

        /// Settings as given; by default no embargo, exogenous records left out.
        package init(
            maxDays: Int, wholeWeeks: Bool, embargoDays: Int = 0, exogenous: Exogenous = .drop, exogenousKinds: [RecordKind] = [],
            maskHolidays: Bool = false
        ) {
            self.maskHolidays = maskHolidays
            self.maxDays = maxDays
            self.wholeWeeks = wholeWeeks
            self.embargoDays = embargoDays
            self.exogenous = exogenous
            self.exogenousKinds = exogenousKinds
        }

        /// Whether records of `kind` are an exogenous public series under these settings.
        package func isExogenous(_ kind: RecordKind) -> Bool { kind.dataType == .environment || exogenousKinds.contains(kind) }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            self.init(
                maxDays: try c.decode(Int.self, forKey: .maxDays), wholeWeeks: try c.decode(Bool.self, forKey: .wholeWeeks),
                embargoDays: try c.decodeIfPresent(Int.self, forKey: .embargoDays) ?? 0,
                exogenous: try c.decodeIfPresent(Exogenous.self, forKey: .exogenous) ?? .drop,
                exogenousKinds: try c.decodeIfPresent([RecordKind].self, forKey: .exogenousKinds) ?? [],
                maskHolidays: try c.decodeIfPresent(String.self, forKey: .holidays) == "mask")
        }

        /// Encodes the settings added for issue 27 only when they differ from their defaults, so
        /// the canonical JSON (and `policy_sha256`) of an older policy does not change.
        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(maxDays, forKey: .maxDays)
            try c.encode(wholeWeeks, forKey: .wholeWeeks)
            if embargoDays != 0 { try c.encode(embargoDays, forKey: .embargoDays) }
            if exogenous != .drop { try c.encode(exogenous, forKey: .exogenous) }
            if !exogenousKinds.isEmpty { try c.encode(exogenousKinds, forKey: .exogenousKinds) }
            if maskHolidays { try c.encode("mask", forKey: .holidays) }
        }

        enum CodingKeys: String, CodingKey {
            case exogenous, holidays
            case maxDays = "max_days"
            case wholeWeeks = "whole_weeks"
            case embargoDays = "embargo_days"
            case exogenousKinds = "exogenous_kinds"
        }
    }

    /// k-anonymity settings. The quasi-identifiers are every participant-level column the export
    /// publishes (see ``publishedParticipantColumns``); `quasiIdentifiers` names extra ones.
    public struct KAnonymity: Sendable, Hashable, Codable {
        /// The smallest equivalence class size the export must reach.
        public var k: Int
        /// Extra quasi-identifiers (`participant.<field>`), on top of every published participant
        /// column. Kept from the first protocol format, where they were the whole set.
        public var quasiIdentifiers: [String]
        /// Sensitive fields (`consent.<field>` or `<data type>.<field>`) whose l-diversity the
        /// export's risk report states; nil when the protocol names none.
        public var sensitive: [String]?
        /// `record_attributes` as the protocol gives it (`enforce` or `state`), nil when it does
        /// not: kept so a protocol's canonical JSON is what it says.
        package var recordAttributes: String?
        /// Whether the export also reaches k over what an acquaintance can know from the records
        /// (`record_attributes: enforce`, the default since issue 27: records generalized, then
        /// coarser columns, then participants left out), or only states the k it has over them
        /// (`state`).
        package var enforceRecordAttributes: Bool {
            get { recordAttributes != "state" }
            set { recordAttributes = newValue ? "enforce" : "state" }
        }

        /// Settings as given (`enforceRecordAttributes` nil: not given, which enforces).
        package init(k: Int, quasiIdentifiers: [String], sensitive: [String]? = nil, enforceRecordAttributes: Bool? = nil) {
            self.k = k
            self.quasiIdentifiers = quasiIdentifiers
            self.sensitive = sensitive
            self.recordAttributes = enforceRecordAttributes.map { $0 ? "enforce" : "state" }
        }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            self.init(
                k: try c.decode(Int.self, forKey: .k), quasiIdentifiers: try c.decode([String].self, forKey: .quasiIdentifiers),
                sensitive: try c.decodeIfPresent([String].self, forKey: .sensitive))
            recordAttributes = try c.decodeIfPresent(String.self, forKey: .recordAttributes)
        }

        /// `record_attributes` is encoded only when the protocol gives it, so policies that do
        /// not keep their canonical JSON.
        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(k, forKey: .k)
            try c.encode(quasiIdentifiers, forKey: .quasiIdentifiers)
            try c.encodeIfPresent(sensitive, forKey: .sensitive)
            try c.encodeIfPresent(recordAttributes, forKey: .recordAttributes)
        }

        enum CodingKeys: String, CodingKey {
            case k, sensitive
            case quasiIdentifiers = "quasi_identifiers"
            case recordAttributes = "record_attributes"
        }
    }

    /// The participant fields a protocol may name as extra quasi-identifiers.
    package static let quasiIdentifierFields = [
        "participant.birth_date", "participant.age", "participant.sex", "participant.zip", "participant.enrolled_on",
        "participant.status", "participant.time_zone", "participant.devices",
    ]

    /// The columns of `participants.csv` (besides the pseudonym) under this policy, in file order:
    /// every one is a quasi-identifier. `withdrawn_at` comes with `status` and `enrolled_on`;
    /// `utc_offset` (the one offset a participant's times are written at) whenever a time with an
    /// offset is published.
    package var publishedParticipantColumns: [String] {
        func kept(_ table: String, _ field: String) -> Bool { rule(table: table, field: field).map { $0.transform != .drop } ?? false }
        var columns: [String] = []
        if kept("participant", "sex") { columns.append("sex") }
        if kept("participant", "birth_date") { columns.append("birth_year") }
        if kept("participant", "age") { columns.append("age_band") }
        if kept("participant", "zip") { columns.append("zip3") }
        if kept("participant", "enrolled_on") { columns.append("enrolled_on") }
        if kept("participant", "status") { columns.append("status") }
        if kept("participant", "status"), kept("participant", "enrolled_on") { columns.append("withdrawn_at") }
        if kept("participant", "time_zone") { columns.append("time_zone") }
        if kept("participant", "devices") { columns.append("devices") }
        if publishesUTCOffset { columns.append("utc_offset") }
        return columns
    }

    /// Whether the export writes any time with a UTC offset (withdrawal, consent signing, record
    /// start or end): the participant's offset is then published and is a quasi-identifier.
    package var publishesUTCOffset: Bool {
        func kept(_ table: String, _ field: String) -> Bool { rule(table: table, field: field).map { $0.transform != .drop } ?? false }
        if kept("participant", "status"), kept("participant", "enrolled_on") { return true }
        if kept("consent", "signed_at") { return true }
        let recordTables = ["records"] + DataType.allCases.map(\.rawValue)
        return recordTables.contains { table in
            ["start", "end"].contains { field in fields["\(table).\(field)"].map { $0.transform != .drop } ?? false }
        }
    }

    enum CodingKeys: String, CodingKey {
        case fields
        case dateShift = "date_shift"
        case kAnonymity = "k_anonymity"
    }
}

/// What happens to one field on export.
public enum Transform: String, Sendable, Hashable, Codable, CaseIterable {
    /// Copied as is.
    case keep
    /// Left out (the same as having no rule, but stated).
    case drop
    /// Replaced by the recipient-keyed pseudonym.
    case pseudonymize
    /// Dates and instants moved by the participant's offset.
    case shift
    /// Dates reduced to their year.
    case year
    /// ZIP codes cut to three digits (`000` for restricted prefixes).
    case zip3
    /// Ages grouped into bands (`bins`), `90+` at the top.
    case ageBand = "age_band"
    /// Free text with identifiers replaced by typed tokens.
    case scrub
    /// Numbers binned (`bins`) or text mapped (`map`, unmapped values become `other`).
    case generalize
}

/// A field rule: its transform and the transform's settings.
public struct FieldRule: Sendable, Hashable, Codable {
    package var transform: Transform
    /// Bin edges for `age_band` and numeric `generalize`.
    package var bins: [Double]?
    /// Value map for textual `generalize`.
    public var map: [String: String]?
    /// What unmapped text becomes under `generalize` (default `other`).
    public var other: String?

    package init(_ transform: Transform, bins: [Double]? = nil, map: [String: String]? = nil, other: String? = nil) {
        self.transform = transform
        self.bins = bins
        self.map = map
        self.other = other
    }

    public init(from decoder: any Decoder) throws {
        if let single = try? decoder.singleValueContainer(), let text = try? single.decode(String.self) {
            guard let transform = Transform(rawValue: text) else {
                throw DecodingError.dataCorruptedError(in: single, debugDescription: "unknown transform")
            }
            self.init(transform)
            return
        }
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            try c.decode(Transform.self, forKey: .transform), bins: try c.decodeIfPresent([Double].self, forKey: .bins),
            map: try c.decodeIfPresent([String: String].self, forKey: .map), other: try c.decodeIfPresent(String.self, forKey: .other))
    }

    public func encode(to encoder: any Encoder) throws {
        if bins == nil, map == nil, other == nil {
            var single = encoder.singleValueContainer()
            try single.encode(transform)
            return
        }
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(transform, forKey: .transform)
        try c.encodeIfPresent(bins, forKey: .bins)
        try c.encodeIfPresent(map, forKey: .map)
        try c.encodeIfPresent(other, forKey: .other)
    }

    enum CodingKeys: String, CodingKey {
        case transform, bins, map, other
    }
}
