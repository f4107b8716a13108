import CohortCore
import CohortDeid
import CohortPackage
import CohortStore

extension ExportJob {
    /// Makes the export's participant rows k-anonymous under `policy` (nothing when it asks for
    /// no k): generalizes and suppresses in `rows`, and leaves out of `included` and `rows` the
    /// participants suppressed entirely (their consents and records go with them), counting them
    /// in `exclusions`. Returns what was achieved, for the report and the manifest.
    static func applyKAnonymity(
        policy: DeidentificationPolicy, included: inout [StoredParticipant], rows: inout [DeidentifiedParticipant],
        exclusions: inout [String: Int]
    ) throws -> KAnonymitySummary? {
        guard let anonymizer = try KAnonymizer(policy: policy) else { return nil }
        let result = anonymizer.apply(rows)
        // The kept rows are the input rows in input order less the suppressed ones: walk both,
        // and take the anonymizer's rows as they are once every pseudonym is where it should be.
        var keptParticipants: [StoredParticipant] = []
        keptParticipants.reserveCapacity(result.participants.count)
        var next = result.participants.startIndex
        for (stored, row) in zip(included, rows) {
            if result.suppressedPseudonyms.contains(row.pseudonym) {
                exclusions["suppressed for k-anonymity", default: 0] += 1
                continue
            }
            guard next < result.participants.endIndex, result.participants[next].pseudonym == row.pseudonym else {
                throw Self.kAnonymityOrderError
            }
            keptParticipants.append(stored)
            next += 1
        }
        guard next == result.participants.endIndex else { throw Self.kAnonymityOrderError }
        included = keptParticipants
        rows = result.participants
        return result.summary
    }

    /// k-anonymization returned rows that are not the input rows in order (less the suppressed).
    private static var kAnonymityOrderError: CohortError {
        CohortError(
            .integrity, "k-anonymization returned participant rows out of step with the export's participants",
            at: .init(field: "deidentification.k_anonymity"),
            hint: "this is a bug in cohort: nothing was published; report it with the protocol's deidentification section")
    }
}

extension ExportManifest.KAnonymity {
    /// The manifest's statement of a k-anonymity summary (sensitive fields as `table.column`).
    init(_ summary: KAnonymitySummary) {
        self.init(
            requestedK: summary.requestedK, achievedK: summary.achievedK, quasiIdentifiers: summary.quasiIdentifiers,
            classes: summary.classes, generalized: summary.generalized, suppressedValues: summary.suppressedValues,
            suppressedParticipants: summary.suppressedParticipants, sensitive: summary.sensitive?.map { "\($0.table).\($0.column)" })
    }
}
