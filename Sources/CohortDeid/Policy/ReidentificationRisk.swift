/// An auditor's re-identification risk measures for a published participant table, computed from
/// the published values alone.
///
/// - **Equivalence class**: the records with equal text in every quasi-identifier column (an
///   empty cell is a value of its own). **k** is the smallest class size.
/// - **Prosecutor risk** of a record = 1 / its class size (an adversary who knows the person is in
///   the data picks one record of the class): the maximum is 1/k; the average over records is
///   classes / records.
/// - **Sample uniqueness**: the share of records alone in their class.
/// - **l-diversity** of a sensitive field: per class, the number of distinct values the class's
///   participants have in that field (all their rows of its table; a participant without rows
///   counts as one empty value); l is the smallest over classes.
public struct ReidentificationRisk: Sendable, Hashable, Codable {
    /// One equivalence class.
    public struct EquivalenceClass: Sendable, Hashable, Codable {
        /// The class's quasi-identifier values, in ``ReidentificationRisk/quasiIdentifiers`` order.
        public var values: [String]
        /// Number of records in the class.
        public var size: Int
        /// Distinct sensitive values per sensitive field (`table.column` → count).
        public var diversity: [String: Int]

        /// A class as given.
        package init(values: [String], size: Int, diversity: [String: Int]) {
            self.values = values
            self.size = size
            self.diversity = diversity
        }
    }

    /// l-diversity of one sensitive field.
    public struct Diversity: Sendable, Hashable, Codable {
        /// `table.column` of the CSV files, e.g. `medications.text`.
        public var field: String
        /// The smallest number of distinct values in a class (nil without records).
        public var l: Int?
        /// Classes with a single distinct value (everyone in them shares the sensitive value).
        public var homogeneousClasses: Int

        /// A diversity result as given.
        package init(field: String, l: Int?, homogeneousClasses: Int) {
            self.field = field
            self.l = l
            self.homogeneousClasses = homogeneousClasses
        }

        enum CodingKeys: String, CodingKey {
            case field, l
            case homogeneousClasses = "homogeneous_classes"
        }
    }

    /// The quasi-identifier columns the classes are formed over.
    public var quasiIdentifiers: [String]
    /// Number of records (participants).
    public var records: Int
    /// Number of equivalence classes.
    public var classes: Int
    /// The smallest class size (nil without records).
    public var k: Int?
    /// The largest prosecutor risk, 1/k (0 without records).
    public var prosecutorRiskMax: Double
    /// The average prosecutor risk over records, classes / records (0 without records).
    public var prosecutorRiskAverage: Double
    /// Records alone in their class.
    public var uniqueRecords: Int
    /// `uniqueRecords` / records (0 without records).
    public var sampleUniqueness: Double
    /// l-diversity per sensitive field.
    public var lDiversity: [Diversity]
    /// Every class, smallest first (ties: by values).
    public var equivalenceClasses: [EquivalenceClass]

    /// Computes the measures for records whose quasi-identifier values are `rows` (one array per
    /// record, in `quasiIdentifiers` order) and whose keys (pseudonyms) are `keys`; `sensitive`
    /// gives, per field, each key's set of values.
    package init(quasiIdentifiers: [String], rows: [[String]], keys: [String], sensitive: [(field: String, values: [String: Set<String>])]) {
        self.quasiIdentifiers = quasiIdentifiers
        records = rows.count
        var members: [[String]: [Int]] = [:]
        for (index, row) in rows.enumerated() { members[row, default: []].append(index) }
        classes = members.count
        k = members.values.map(\.count).min()
        prosecutorRiskMax = k.map { 1 / Double($0) } ?? 0
        prosecutorRiskAverage = rows.isEmpty ? 0 : Double(members.count) / Double(rows.count)
        uniqueRecords = members.values.filter { $0.count == 1 }.count
        sampleUniqueness = rows.isEmpty ? 0 : Double(uniqueRecords) / Double(rows.count)
        var list: [EquivalenceClass] = []
        for (values, indices) in members {
            var diversity: [String: Int] = [:]
            for (field, byKey) in sensitive {
                var distinct: Set<String> = []
                for index in indices { distinct.formUnion(byKey[keys[index]] ?? [""]) }
                diversity[field] = distinct.count
            }
            list.append(EquivalenceClass(values: values, size: indices.count, diversity: diversity))
        }
        list.sort { a, b in a.size != b.size ? a.size < b.size : a.values.lexicographicallyPrecedes(b.values) }
        equivalenceClasses = list
        lDiversity = sensitive.map { field, _ in
            Diversity(
                field: field, l: list.compactMap { $0.diversity[field] }.min(),
                homogeneousClasses: list.filter { $0.diversity[field] == 1 }.count)
        }
    }

    enum CodingKeys: String, CodingKey {
        case records, classes, k
        case quasiIdentifiers = "quasi_identifiers"
        case prosecutorRiskMax = "prosecutor_risk_max"
        case prosecutorRiskAverage = "prosecutor_risk_average"
        case uniqueRecords = "unique_records"
        case sampleUniqueness = "sample_uniqueness"
        case lDiversity = "l_diversity"
        case equivalenceClasses = "equivalence_classes"
    }
}
