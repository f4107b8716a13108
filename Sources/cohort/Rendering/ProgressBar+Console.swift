import CohortKit

extension ProgressBar {
    /// A bar that draws only when ``Console/showsProgress`` (stderr is a terminal, no `--quiet`).
    convenience init(_ label: String, unit: ProgressLine.Unit, total: Int? = nil) {
        self.init(label, unit: unit, total: total, enabled: Console.showsProgress)
    }
}
