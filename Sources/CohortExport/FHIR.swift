import Foundation

/// FHIR R4 JSON shapes, as plain Codable structs: no FHIR library exists for Swift on Linux, and
/// the export needs only a handful of resources. Optional properties are left out when nil.
enum FHIR {
    static let ucum = "http://unitsofmeasure.org"
    static let observationCategory = "http://terminology.hl7.org/CodeSystem/observation-category"
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

    /// A quantity; `value` is a `Decimal` so the JSON number is exactly the export's number text.
    struct Quantity: Codable, Sendable, Hashable {
        var value: Decimal?
        var unit: String?
        var system: String?
        var code: String?
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
            let escaped = text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
                .replacingOccurrences(of: ">", with: "&gt;")
            div = "<div xmlns=\"\(FHIR.xhtml)\">\(escaped)</div>"
        }
    }

    /// `value` as a FHIR decimal.
    static func decimal(_ value: Double) -> Decimal? { Decimal(string: NumberText.format(value)) }
}
