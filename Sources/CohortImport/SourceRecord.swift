/// One record read from an outside source (FHIR, health_metrics), in cohort's record columns,
/// before validation. Values are text, as in a cohort CSV row; the participant is already the
/// study code the source's patient or user maps to.
package struct SourceRecord: Sendable, Equatable {
    public var participant: String
    /// A ``CohortCore/RecordKind`` raw value.
    public var kind: String
    /// ISO 8601; without an offset it is read in the participant's time zone.
    public var start: String
    public var end: String?
    public var value: String?
    /// A UCUM unit (already the kind's canonical unit where the reader converted it).
    public var unit: String?
    public var text: String?
    public var source: String?
    public var note: String?
    /// Where the record came from, for errors: the file (or `table` for a database) and line (or row).
    public var file: String
    public var line: Int
    /// Record column → where in the source it came from (`Observation.valueQuantity.value`,
    /// `heart_rate_avg`), so a validation error names the source's own field.
    package var origins: [String: String]
    /// What the summary counts the record under when it is imported: the metric (health_metrics
    /// column) or the kind (FHIR); nil = the kind.
    package var item: String?

    package init(
        participant: String, kind: String, start: String, end: String? = nil, value: String? = nil, unit: String? = nil, text: String? = nil,
        source: String? = nil, note: String? = nil, file: String, line: Int, origins: [String: String] = [:], item: String? = nil
    ) {
        self.item = item
        self.participant = participant
        self.kind = kind
        self.start = start
        self.end = end
        self.value = value
        self.unit = unit
        self.text = text
        self.source = source
        self.note = note
        self.file = file
        self.line = line
        self.origins = origins
    }

    /// The record columns as text (absent values left out), in cohort's column names.
    public var columns: [String: String] {
        var result = ["participant": participant, "kind": kind, "start": start]
        if let end { result["end"] = end }
        if let value { result["value"] = value }
        if let unit { result["unit"] = unit }
        if let text { result["text"] = text }
        if let source { result["source"] = source }
        if let note { result["note"] = note }
        return result
    }
}
