import Foundation

/// A FHIR resource the export writes: every one has a type and a deterministic UUID id.
protocol FHIRResource: Encodable, Sendable {
    var resourceType: String { get }
    var id: String { get }
}

extension FHIR {
    struct Patient: FHIRResource, Codable {
        var resourceType = "Patient"
        var id: String
        var meta: Meta?
        var text: Narrative?
        var identifier: [Identifier]?
        var gender: String?
        var birthDate: String?
    }

    struct Observation: FHIRResource, Codable {
        var resourceType = "Observation"
        var id: String
        var text: Narrative?
        var status = "final"
        var category: [CodeableConcept]?
        var code: CodeableConcept
        var subject: Reference
        var effectiveDateTime: String?
        var effectivePeriod: Period?
        var valueQuantity: Quantity?
        var valueString: String?
        var dataAbsentReason: CodeableConcept?
        var note: [Annotation]?
        var device: Reference?
        var component: [Component]?

        struct Component: Codable, Sendable, Hashable {
            var code: CodeableConcept
            var valueString: String?
        }
    }

    struct MedicationStatement: FHIRResource, Codable {
        var resourceType = "MedicationStatement"
        var id: String
        var text: Narrative?
        var status = "completed"
        var medicationCodeableConcept: CodeableConcept
        var subject: Reference
        var effectiveDateTime: String?
        var effectivePeriod: Period?
        var note: [Annotation]?
        var dosage: [Dosage]?

        struct Dosage: Codable, Sendable, Hashable {
            var doseAndRate: [DoseAndRate]
        }

        struct DoseAndRate: Codable, Sendable, Hashable {
            var doseQuantity: Quantity
        }
    }

    struct Consent: FHIRResource, Codable {
        var resourceType = "Consent"
        var id: String
        var text: Narrative?
        var status: String
        var scope: CodeableConcept
        var category: [CodeableConcept]
        var patient: Reference
        var dateTime: String?
        var policy: [Policy]
        var provision: Provision

        struct Policy: Codable, Sendable, Hashable {
            var uri: String
        }

        struct Provision: Codable, Sendable, Hashable {
            var type: String
            var period: Period?
            var purpose: [Coding]?
        }
    }

    struct ResearchStudy: FHIRResource, Codable {
        var resourceType = "ResearchStudy"
        var id: String
        var text: Narrative?
        var identifier: [Identifier]
        var title: String
        var status = "active"
    }

    struct ResearchSubject: FHIRResource, Codable {
        var resourceType = "ResearchSubject"
        var id: String
        var text: Narrative?
        var status: String
        var period: Period?
        var study: Reference
        var individual: Reference
        var consent: Reference?
    }

    struct Provenance: FHIRResource, Codable {
        var resourceType = "Provenance"
        var id: String
        var text: Narrative?
        var target: [Reference]
        var recorded: String
        var policy: [String]?
        var reason: [CodeableConcept]?
        var activity: CodeableConcept
        var agent: [Agent]

        struct Agent: Codable, Sendable, Hashable {
            var type: CodeableConcept?
            var who: Reference
        }
    }
}
