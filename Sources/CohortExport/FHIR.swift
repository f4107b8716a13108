import CohortCore
import Foundation

/// FHIR R4 JSON shapes, as plain Codable structs: no FHIR library exists for Swift on Linux, and
/// the export needs only a handful of resources. Optional properties are left out when nil.
enum FHIR {
    static let ucum = "http://unitsofmeasure.org"
    static let rxNorm = "http://www.nlm.nih.gov/research/umls/rxnorm"
    static let observationCategory = "http://terminology.hl7.org/CodeSystem/observation-category"
    /// cohort's own observation categories (`environment`), beside the standard one.
    static let localObservationCategory = "https://cohort.example.org/fhir/CodeSystem/observation-category"
    static let observationValue = "http://terminology.hl7.org/CodeSystem/v3-ObservationValue"
    static let dataAbsentReason = "http://terminology.hl7.org/CodeSystem/data-absent-reason"
    static let consentScope = "http://terminology.hl7.org/CodeSystem/consentscope"
    static let actReason = "http://terminology.hl7.org/CodeSystem/v3-ActReason"
    static let provenanceParticipantType = "http://terminology.hl7.org/CodeSystem/provenance-participant-type"
    static let consentActionPermit = "permit"
    static let xhtml = "http://www.w3.org/1999/xhtml"
    /// cohort's base for identifier systems and policy URIs.
    static let base = "https://cohort.example.org/fhir"

    struct Coding: Codable, Sendable, Hashable {
        var system: String?
        var code: String?
        var display: String?
    }

    struct CodeableConcept: Codable, Sendable, Hashable {
        var coding: [Coding]?
        var text: String?
    }

    struct Reference: Codable, Sendable, Hashable {
        var reference: String?
        var display: String?
    }

    struct Period: Codable, Sendable, Hashable {
        var start: String?
        var end: String?
    }

    /// A quantity. Its number is either a `Decimal` or the export's number text (records give
    /// text, so the fast writer copies it instead of parsing and printing a `Decimal`); both
    /// encode as the same JSON number.
    struct Quantity: Codable, Sendable, Hashable {
        /// The number as JSON number text, exactly as `JSONEncoder` writes `value`.
        private(set) var valueText: String?
        var unit: String?
        var system: String?
        var code: String?

        init(value: Decimal?, unit: String?, system: String?, code: String?) {
            valueText = value.map { "\($0)" }
            self.unit = unit
            self.system = system
            self.code = code
        }

        /// A quantity whose number is `text`, which must read back as a `Decimal` with the same
        /// text (``FHIR/numberText(_:)`` gives such text).
        init(numberText text: String, unit: String?, system: String?, code: String?) {
            valueText = text
            self.unit = unit
            self.system = system
            self.code = code
        }

        /// The number as a `Decimal` (what `JSONEncoder` writes).
        var value: Decimal? {
            get { valueText.flatMap { Decimal(string: $0) } }
            set { valueText = newValue.map { "\($0)" } }
        }

        enum CodingKeys: String, CodingKey {
            case value, unit, system, code
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.init(
                value: try container.decodeIfPresent(Decimal.self, forKey: .value),
                unit: try container.decodeIfPresent(String.self, forKey: .unit),
                system: try container.decodeIfPresent(String.self, forKey: .system),
                code: try container.decodeIfPresent(String.self, forKey: .code))
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encodeIfPresent(value, forKey: .value)
            try container.encodeIfPresent(unit, forKey: .unit)
            try container.encodeIfPresent(system, forKey: .system)
            try container.encodeIfPresent(code, forKey: .code)
        }
    }

    struct Annotation: Codable, Sendable, Hashable {
        var text: String
    }

    struct Identifier: Codable, Sendable, Hashable {
        var system: String?
        var value: String?
    }

    struct Meta: Codable, Sendable, Hashable {
        var security: [Coding]?
    }

    /// A generated narrative (dom-6 asks every resource for one); never holds record values.
    struct Narrative: Codable, Sendable, Hashable {
        var status = "generated"
        var div: String

        init(_ text: String) {
            // By bytes (a `<` followed by a combining mark is one character that is not `<`).
            let escaped = ASCIIEscaping.replacing([0x26: "&amp;", 0x3C: "&lt;", 0x3E: "&gt;"], in: text)
            div = "<div xmlns=\"\(FHIR.xhtml)\">\(escaped)</div>"
        }
    }

    /// `value` as a FHIR decimal.
    static func decimal(_ value: Double) -> Decimal? { Decimal(string: NumberText.format(value)) }

    /// `value` as FHIR decimal text: `NumberText.format(value)` where that text reads back as a
    /// `Decimal` printing the same text (finite values with magnitude in 1e-15 ..< 1e15, or 0 —
    /// every record value), else the text of `decimal(value)`; nil when there is no decimal.
    static func numberText(_ value: Double) -> String? {
        let magnitude = abs(value)
        if value == 0 || (magnitude >= 1e-15 && magnitude < 1e15) { return NumberText.format(value) }
        return decimal(value).map { "\($0)" }
    }
}
