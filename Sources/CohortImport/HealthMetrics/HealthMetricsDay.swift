/// One daily row of `health_metrics` as read from any of its three forms (table, CSV dump, sync
/// body): text values, nil for NULL. `raw_data` is never read.
package struct HealthMetricsDay: Sendable {
    package var userID: String
    /// The day, `YYYY-MM-DD` (a timestamp's date part is used when the column holds one).
    package var recordedAt: String
    public var source: String?
    /// An IANA zone name; nil = the participant's own zone.
    public var timeZone: String?
    /// Non-null metrics and their values as text.
    public var metrics: [(HealthMetric, String)]
    /// Where the row is (file or `table`, line or row number) and how a field is named there.
    public var file: String
    public var line: Int
    /// Field names as the source spells them (`heart_rate_avg` or `records[2].metrics.heartRateAvg`).
    package var fieldName: @Sendable (HealthMetric) -> String

    package init(
        userID: String, recordedAt: String, source: String?, timeZone: String?, metrics: [(HealthMetric, String)], file: String, line: Int,
        fieldName: @escaping @Sendable (HealthMetric) -> String = { $0.rawValue }
    ) {
        self.userID = userID
        self.recordedAt = recordedAt
        self.source = source
        self.timeZone = timeZone
        self.metrics = metrics
        self.file = file
        self.line = line
        self.fieldName = fieldName
    }
}
