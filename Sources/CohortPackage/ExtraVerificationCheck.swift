package import Foundation

/// A caller-supplied check run on the extracted bag (e.g. the residual-PII scan or the
/// audit-chain check in CohortKit).
///
/// It runs only when the archive extracted completely; otherwise, or when `run` throws, it is
/// reported as failed under `name`.
package struct ExtraVerificationCheck {
    /// The name reported when the check cannot run or throws.
    public var name: String
    /// Gets the extracted bag directory (`<tmp>/<bag name>`), which is removed afterwards.
    public var run: (URL) throws -> VerificationCheck

    /// A check as given.
    package init(name: String, run: @escaping (URL) throws -> VerificationCheck) {
        self.name = name
        self.run = run
    }
}
