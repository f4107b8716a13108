import CohortCore
/// `data/csv/datapackage.json`: a Frictionless Tabular Data Package describing every CSV table.
struct DataPackage: Encodable, Sendable {
    var profile = "tabular-data-package"
    var name: String
    var title: String
    var created: String
    var version: String
    var resources: [Resource]

    struct Resource: Encodable, Sendable {
        var profile = "tabular-data-resource"
        var name: String
        var path: String
        var title: String?
        var description: String?
        var format = "csv"
        var mediatype = "text/csv"
        var encoding = "utf-8"
        var dialect = Dialect()
        var schema: Schema
    }

    struct Dialect: Encodable, Sendable {
        var delimiter = ","
        var lineTerminator = "\r\n"
        var header = true
        var doubleQuote = true
        var quoteChar = "\""
    }

    struct Schema: Encodable, Sendable {
        var fields: [Field]
        var primaryKey: [String]?
        var foreignKeys: [ForeignKey]?
        var missingValues = [""]
    }

    struct Field: Encodable, Sendable {
        var name: String
        var type: String
        var description: String?
        var constraints: Constraints?
    }

    struct Constraints: Encodable, Sendable {
        var required: Bool?
        var unique: Bool?
        var `enum`: [String]?
        var minimum: Double?
        var maximum: Double?
        /// An XML Schema regular expression the whole value matches (codes with leading zeros,
        /// pseudonyms, hashes): tells a reader the column is a code, not a number.
        var pattern: String?
    }

    struct ForeignKey: Encodable, Sendable {
        var fields: [String]
        var reference: Reference
    }

    struct Reference: Encodable, Sendable {
        var resource: String
        var fields: [String]
    }

    /// The package for `layouts` (participants first) plus the codebook.
    init(context: ExportContext, layouts: [TableLayout]) {
        let study = context.studyProtocol
        name = study.id
        title = study.title
        created = context.createdAt.iso8601
        version = String(study.revision)
        var resources: [Resource] = layouts.map { layout in
            let isParticipants = layout.name == "participants"
            let fields = layout.columns.map { column in
                let isKey = isParticipants && column.name == "pseudonym"
                let constraints = Constraints(
                    required: column.required ? true : nil, unique: isKey ? true : nil, enum: column.allowedValues,
                    minimum: column.minimum, maximum: column.maximum, pattern: column.pattern)
                let empty = constraints.required == nil && constraints.unique == nil && constraints.enum == nil
                    && constraints.minimum == nil && constraints.maximum == nil && constraints.pattern == nil
                return Field(name: column.name, type: column.type.rawValue, description: column.description, constraints: empty ? nil : constraints)
            }
            return Resource(
                name: layout.name, path: layout.name + ".csv", title: nil, description: layout.description,
                schema: Schema(
                    fields: fields, primaryKey: isParticipants ? ["pseudonym"] : nil,
                    foreignKeys: isParticipants
                        ? nil : [ForeignKey(fields: ["pseudonym"], reference: Reference(resource: "participants", fields: ["pseudonym"]))]))
        }
        resources.append(
            Resource(
                name: "codebook", path: "codebook.csv", title: nil, description: "One row per column per table, and one per record kind",
                schema: Schema(
                    fields: Codebook.header.map { Field(name: $0, type: "string", description: nil, constraints: nil) },
                    primaryKey: nil, foreignKeys: nil)))
        self.resources = resources
    }
}
