package import Foundation

/// A caller-supplied check run on the extracted bag (e.g. the residual-PII scan or the
/// audit-chain check in CohortKit).
///
/// It runs only when the archive extracted completely; otherwise, or when `run` throws, it is
/// reported as failed under `name`.
package struct ExtraVerificationCheck {
    /// Which of the bag's files a check reads, by bag-relative path (`data/csv/steps.csv`).
    ///
    /// The verifier writes to its temporary folder only the files some check reads; every member
    /// of the archive is still inflated, hashed and counted as it streams by. A check that does
    /// not say reads ``everything``, so leaving it out costs time, never a file a check needed.
    package enum Reads {
        /// No file of the bag (the check reads the manifest, the workspace or nothing).
        case nothing
        /// The files whose bag-relative path the predicate accepts.
        case files((String) -> Bool)
        /// Every file of the bag.
        case everything

        /// Whether the check reads the file at bag-relative `path`.
        package func includes(_ path: String) -> Bool {
            switch self {
            case .nothing: false
            case .files(let accepts): accepts(path)
            case .everything: true
            }
        }
    }

    /// The name reported when the check cannot run or throws.
    public var name: String
    /// The files `run` finds in the extracted bag; no other file is extracted for it.
    public var reads: Reads
    /// Gets the extracted bag directory (`<tmp>/<bag name>`), which is removed afterwards.
    public var run: (URL) throws -> VerificationCheck

    /// A check as given; `reads` defaults to every file of the bag.
    package init(name: String, reads: Reads = .everything, run: @escaping (URL) throws -> VerificationCheck) {
        self.name = name
        self.reads = reads
        self.run = run
    }
}
