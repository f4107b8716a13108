import Foundation
import Yams

extension NodeReader {
    static let topKeys = [
        "schema", "id", "revision", "title", "institution", "principal_investigator", "irb", "duration_days", "consent",
        "data_types", "compliance", "deidentification", "export", "import",
    ]
    static let optionalTopKeys = ["medication_codes", "source_priority"]

    func readProtocol(_ node: Node) -> StudyProtocol? {
        guard let top = mapping(node, "", keys: Self.topKeys + Self.optionalTopKeys, required: Self.topKeys.filter { $0 != "import" }) else { return nil }
        if let schema = string(top["schema"], "schema"), schema != StudyProtocol.schemaID {
            error(top["schema"], "schema", "unsupported schema '\(schema)'", hint: "this cohort reads '\(StudyProtocol.schemaID)'")
        }
        let id = string(top["id"], "id")
        if let id, id.range(of: #"^[a-z0-9][a-z0-9-]{0,62}$"#, options: .regularExpression) == nil {
            error(top["id"], "id", "must be lower-case letters, digits and '-' (at most 63), e.g. 'axspa-wearables'")
        }
        let revision = int(top["revision"], "revision", range: 1...1_000_000)
        let title = string(top["title"], "title")
        let institution = string(top["institution"], "institution")
        let investigator = readInvestigator(top["principal_investigator"])
        let irb = readIRB(top["irb"])
        let duration = int(top["duration_days"], "duration_days", range: 1...3650)
        let dataTypes = readDataTypes(top["data_types"])
        let consent = readConsent(top["consent"], dataTypes: dataTypes)
        let compliance = readCompliance(top["compliance"], dataTypes: dataTypes)
        let deid = readDeidentification(top["deidentification"])
        let export = readExport(top["export"])
        let medicationCodes = readMedicationCodes(top["medication_codes"])
        guard let id, let revision, let title, let institution, let investigator, let irb, let duration, let consent,
            let dataTypes, let compliance, let deid, let export
        else { return nil }
        var result = StudyProtocol(
            id: id, revision: revision, title: title, institution: institution, principalInvestigator: investigator, irb: irb,
            durationDays: duration, consent: consent, dataTypes: dataTypes, compliance: compliance, deidentification: deid,
            export: export)
        result.importSettings = readImport(top["import"], dataTypes: dataTypes)
        result.medicationCodes = medicationCodes
        if let node = top["source_priority"] {
            var order: [String] = []
            for (i, item) in (sequence(node, "source_priority") ?? []).enumerated() {
                guard let name = string(item, "source_priority[\(i)]") else { continue }
                if order.contains(where: { $0.caseInsensitiveCompare(name) == .orderedSame }) {
                    error(item, "source_priority[\(i)]", "the source is listed twice", hint: "list each source once, highest first")
                }
                order.append(name)
            }
            result.sourcePriority = SourcePriority(order)
        }
        // A warning here (the protocol is still a valid description of the study), refused at export.
        for gap in result.consentAuditGaps {
            warning(
                top["deidentification"], "deidentification.fields.\(gap.field)",
                "exports are refused until \(gap.field) is '\(gap.transform.rawValue)': auditors recompute consent from it",
                hint: "set '\(gap.field): \(gap.transform.rawValue)' (see docs/auditors-guide.md, consent check)")
        }
        for field in deid.unruledFields(of: result) {
            warning(
                top["deidentification"], "deidentification.fields", "no rule names '\(field)': it will be dropped from exports",
                hint: "add '\(field): drop' to say so, or another transform to export it")
        }
        return result
    }

    func readInvestigator(_ node: Node?) -> StudyProtocol.Investigator? {
        let path = "principal_investigator"
        guard let m = mapping(node, path, keys: ["name", "email"], required: ["name"]) else { return nil }
        guard let name = string(m["name"], "\(path).name") else { return nil }
        let email = m["email"].flatMap { string($0, "\(path).email") }
        return .init(name: name, email: email)
    }

    func readIRB(_ node: Node?) -> StudyProtocol.IRB? {
        let keys = ["board", "approval_number", "expires"]
        guard let m = mapping(node, "irb", keys: keys, required: keys) else { return nil }
        let board = string(m["board"], "irb.board")
        let number = string(m["approval_number"], "irb.approval_number")
        let expires = date(m["expires"], "irb.expires")
        guard let board, let number, let expires else { return nil }
        return .init(board: board, approvalNumber: number, expires: expires)
    }

    func readConsent(_ node: Node?, dataTypes: [DataType: [RecordKind]]?) -> ConsentPolicy? {
        guard
            let m = mapping(
                node, "consent", keys: ["current_version", "reconsent", "documents", "sharing_scopes"], required: ["current_version", "documents"])
        else { return nil }
        let current = string(m["current_version"], "consent.current_version")
        if let current, current.range(of: #"^[0-9]+(\.[0-9]+){0,2}$"#, options: .regularExpression) == nil {
            error(m["current_version"], "consent.current_version", "expected a version like 1.0 or 2.1, found '\(current)'")
        }
        let reconsent = m["reconsent"].map { enumValue($0, "consent.reconsent", ReconsentPolicy.self) } ?? .major
        var documents: [ConsentPolicy.Document] = []
        for (i, item) in (sequence(m["documents"], "consent.documents") ?? []).enumerated() {
            if let document = readConsentDocument(item, path: "consent.documents[\(i)]", dataTypes: dataTypes) {
                if documents.contains(where: { $0.version == document.version }) {
                    error(item, "consent.documents[\(i)].version", "version \(document.version) is listed twice")
                }
                documents.append(document)
            }
        }
        if documents.isEmpty { error(m["documents"] ?? node, "consent.documents", "list at least one consent document") }
        let scopes = readSharingScopes(m["sharing_scopes"])
        guard let current, let reconsent else { return nil }
        if let document = documents.first(where: { $0.version == current }) {
            if !document.accepted {
                error(m["current_version"], "consent.current_version", "the current version \(current) is marked accepted: false", hint: "new participants sign the current version; the protocol must accept it")
            }
        } else if !documents.isEmpty {
            error(m["current_version"], "consent.current_version", "no document is listed for version \(current)", hint: "add it to consent.documents")
        }
        var policy = ConsentPolicy(currentVersion: current, reconsent: reconsent, documents: documents)
        policy.sharingScopes = scopes
        return policy
    }

    /// One `consent.documents[i]`: version, template, and what the version covers and allows.
    func readConsentDocument(_ item: Node, path: String, dataTypes: [DataType: [RecordKind]]?) -> ConsentPolicy.Document? {
        guard
            let d = mapping(item, path, keys: ["version", "template", "covers", "accepted", "retroactive"], required: ["version", "template"])
        else { return nil }
        guard let version = string(d["version"], "\(path).version"), let template = string(d["template"], "\(path).template") else { return nil }
        if !template.hasPrefix("templates/") || template.contains("..") {
            error(d["template"], "\(path).template", "consent documents live under templates/", hint: "e.g. templates/consent/study-1.0.mustache")
        }
        var document = ConsentPolicy.Document(version: version, template: template)
        if let list = d["covers"] {
            var covers: [DataType] = []
            for (j, entry) in (sequence(list, "\(path).covers") ?? []).enumerated() {
                guard let type = enumValue(entry, "\(path).covers[\(j)]", DataType.self) else { continue }
                if let dataTypes, dataTypes[type] == nil {
                    error(entry, "\(path).covers[\(j)]", "the protocol does not collect \(type.rawValue)", hint: "list data types from data_types")
                }
                if !covers.contains(type) { covers.append(type) }
            }
            document.covers = covers.sorted()
        }
        if let node = d["accepted"] { document.accepted = bool(node, "\(path).accepted") ?? true }
        if let node = d["retroactive"] { document.retroactive = bool(node, "\(path).retroactive") ?? false }
        return document
    }

    /// `consent.sharing_scopes`: scope name → the audiences it allows (`study-team`, `external`).
    func readSharingScopes(_ node: Node?) -> [SharingScope: Set<ExportAudience>] {
        guard let node else { return [:] }
        guard case let .mapping(pairs) = node else {
            error(node, "consent.sharing_scopes", "expected a mapping of scope names to audience lists, e.g. broad: [study-team, external]")
            return [:]
        }
        var result: [SharingScope: Set<ExportAudience>] = [:]
        for (key, value) in pairs {
            let name = key.string ?? ""
            let path = "consent.sharing_scopes.\(name)"
            guard let scope = SharingScope(rawValue: name) else {
                error(key, "consent.sharing_scopes", "'\(name)' is not a scope name", hint: "lower-case letters, digits and '-', at most 32, e.g. study-only")
                continue
            }
            var audiences: Set<ExportAudience> = []
            for (j, entry) in (sequence(value, path) ?? []).enumerated() {
                if let audience = enumValue(entry, "\(path)[\(j)]", ExportAudience.self) { audiences.insert(audience) }
            }
            result[scope] = audiences
        }
        return result
    }

    func readDataTypes(_ node: Node?) -> [DataType: [RecordKind]]? {
        guard let node else { return nil }
        guard let m = mapping(node, "data_types", keys: DataType.allCases.map(\.rawValue), required: []) else { return nil }
        var result: [DataType: [RecordKind]] = [:]
        for (key, value) in m {
            guard let type = DataType(rawValue: key) else { continue }
            let path = "data_types.\(key)"
            var kinds: [RecordKind] = []
            for (i, item) in (sequence(value, path) ?? []).enumerated() {
                guard let text = string(item, "\(path)[\(i)]") else { continue }
                guard let kind = RecordKind(rawValue: text) else {
                    let names = type.kinds.map(\.rawValue)
                    let hint = Suggest.closest(to: text, in: RecordKind.allCases.map(\.rawValue)).map { "did you mean '\($0)'?" }
                        ?? "\(key) kinds: \(names.joined(separator: ", "))"
                    error(item, "\(path)[\(i)]", "unknown record kind '\(text)'", hint: hint)
                    continue
                }
                guard kind.dataType == type else {
                    error(item, "\(path)[\(i)]", "'\(text)' belongs to \(kind.dataType.rawValue), not \(key)")
                    continue
                }
                if !kinds.contains(kind) { kinds.append(kind) }
            }
            if kinds.isEmpty { error(value, path, "list the kinds collected", hint: "\(key) kinds: \(type.kinds.map(\.rawValue).joined(separator: ", "))") }
            result[type] = kinds
        }
        if result.isEmpty { error(node, "data_types", "a study collects at least one data type") }
        return result
    }

    func readCompliance(_ node: Node?, dataTypes: [DataType: [RecordKind]]?) -> CompliancePolicy? {
        guard let m = mapping(node, "compliance", keys: ["rules", "reminder_template"], required: ["rules"]) else { return nil }
        var rules: [ComplianceRule] = []
        let ruleKeys = ["id", "description", "data_type", "kinds", "min_per_day", "min_total", "threshold"]
        for (i, item) in (sequence(m["rules"], "compliance.rules") ?? []).enumerated() {
            let path = "compliance.rules[\(i)]"
            guard let r = mapping(item, path, keys: ruleKeys, required: ["id", "threshold"]) else { continue }
            let id = string(r["id"], "\(path).id")
            let description = r["description"].flatMap { string($0, "\(path).description") }
            let dataType = r["data_type"].flatMap { enumValue($0, "\(path).data_type", DataType.self) }
            var kinds: [RecordKind] = []
            for (j, k) in (r["kinds"].flatMap { sequence($0, "\(path).kinds") } ?? []).enumerated() {
                if let kind = enumValue(k, "\(path).kinds[\(j)]", RecordKind.self) { kinds.append(kind) }
            }
            if r["data_type"] == nil, r["kinds"] == nil {
                error(item, path, "a rule counts a data_type or a list of kinds", hint: "e.g. data_type: symptom_log")
            }
            if let dataType, let dataTypes, dataTypes[dataType] == nil {
                error(r["data_type"], "\(path).data_type", "the study does not collect \(dataType.rawValue)", hint: "add it to data_types")
            }
            if let dataTypes {
                for kind in kinds where !(dataTypes[kind.dataType]?.contains(kind) ?? false) {
                    error(r["kinds"], "\(path).kinds", "the study does not collect \(kind.rawValue)", hint: "add it to data_types.\(kind.dataType.rawValue)")
                }
            }
            // `min_total`: one cumulative kind, its overlap-free daily total (DailyTotals) against a threshold.
            var minTotal: Double?
            if let node = r["min_total"] {
                minTotal = double(node, "\(path).min_total", range: 0...1e9)
                if r["data_type"] != nil || kinds.count != 1 || !kinds.allSatisfy(DailyTotals.cumulativeKinds.contains) {
                    error(node, "\(path).min_total", "min_total applies to a rule over one cumulative kind",
                        hint: "kinds: [steps] (or one of \(DailyTotals.cumulativeKinds.map(\.rawValue).sorted().joined(separator: ", "))), no data_type")
                }
                if r["min_per_day"] != nil { error(r["min_per_day"], "\(path).min_per_day", "a rule has min_per_day or min_total, not both") }
            } else if r["min_per_day"] == nil {
                error(item, "\(path).min_per_day", "missing required key",
                    hint: "add 'min_per_day:' (records per day) to \(path), or 'min_total:' for a daily total of one cumulative kind")
            }
            let minPerDay = r["min_per_day"].map { int($0, "\(path).min_per_day", range: 1...1000) } ?? 1
            let threshold = double(r["threshold"], "\(path).threshold", range: 0...1)
            guard let id, let minPerDay, let threshold else { continue }
            if rules.contains(where: { $0.id == id }) { error(r["id"], "\(path).id", "rule id '\(id)' is used twice") }
            let unit = kinds.first?.canonicalUnit ?? ""
            let fallback = minTotal.map { "a daily total of at least \(RuleText.number($0)) \(unit)" } ?? "at least \(minPerDay) per day"
            rules.append(
                ComplianceRule(
                    id: id, description: description ?? fallback, dataType: dataType, kinds: kinds,
                    minPerDay: minPerDay, threshold: threshold, minTotal: minTotal))
        }
        let template = m["reminder_template"].flatMap { string($0, "compliance.reminder_template") }
        return CompliancePolicy(rules: rules, reminderTemplate: template)
    }

    func readDeidentification(_ node: Node?) -> DeidentificationPolicy? {
        guard let m = mapping(node, "deidentification", keys: ["date_shift", "k_anonymity", "fields"], required: ["date_shift", "fields"])
        else { return nil }
        var shift: DeidentificationPolicy.DateShift?
        if let s = mapping(
            m["date_shift"], "deidentification.date_shift", keys: ["max_days", "whole_weeks", "embargo_days", "exogenous", "exogenous_kinds", "holidays"],
            required: ["max_days"])
        {
            let maxDays = int(s["max_days"], "deidentification.date_shift.max_days", range: 0...3650)
            let weeks = s["whole_weeks"].flatMap { bool($0, "deidentification.date_shift.whole_weeks") } ?? false
            let embargo = s["embargo_days"].flatMap { int($0, "deidentification.date_shift.embargo_days", range: 0...3650) } ?? 0
            var exogenous = DeidentificationPolicy.DateShift.Exogenous.drop
            if let node = s["exogenous"], let text = string(node, "deidentification.date_shift.exogenous") {
                if let value = DeidentificationPolicy.DateShift.Exogenous(rawValue: text) {
                    exogenous = value
                } else {
                    error(node, "deidentification.date_shift.exogenous", "expected drop or dated", hint: "drop leaves weather-like public series out")
                }
            }
            var maskHolidays = false
            if let node = s["holidays"], let text = string(node, "deidentification.date_shift.holidays") {
                if text == "mask" || text == "keep" {
                    maskHolidays = text == "mask"
                } else {
                    error(node, "deidentification.date_shift.holidays", "expected mask or keep", hint: "mask hides holiday dips of day totals")
                }
            }
            var extraKinds: [RecordKind] = []
            for (i, item) in (s["exogenous_kinds"].flatMap { sequence($0, "deidentification.date_shift.exogenous_kinds") } ?? []).enumerated() {
                let path = "deidentification.date_shift.exogenous_kinds[\(i)]"
                guard let name = string(item, path) else { continue }
                guard let kind = RecordKind(rawValue: name) else {
                    error(item, path, "unknown record kind", hint: "a kind cohort accepts, e.g. barometric_pressure")
                    continue
                }
                if !extraKinds.contains(kind) { extraKinds.append(kind) }
            }
            if let maxDays {
                if weeks, maxDays > 0, maxDays < 7 {
                    error(s["max_days"], "deidentification.date_shift.max_days", "whole_weeks needs max_days of at least 7")
                }
                if embargo > maxDays {
                    error(s["embargo_days"], "deidentification.date_shift.embargo_days", "embargo_days is larger than max_days", hint: "embargo_days = max_days hides the shift from the last record")
                }
                shift = .init(maxDays: maxDays, wholeWeeks: weeks, embargoDays: embargo, exogenous: exogenous, exogenousKinds: extraKinds, maskHolidays: maskHolidays)
            }
        }
        var kAnonymity: DeidentificationPolicy.KAnonymity?
        if let kNode = m["k_anonymity"],
            let k = mapping(kNode, "deidentification.k_anonymity", keys: ["k", "quasi_identifiers", "sensitive", "record_attributes"], required: ["k"])
        {
            let value = int(k["k"], "deidentification.k_anonymity.k", range: 1...1000)
            var qids: [String] = []
            for (i, q) in (k["quasi_identifiers"].flatMap { sequence($0, "deidentification.k_anonymity.quasi_identifiers") } ?? []).enumerated() {
                guard let name = string(q, "deidentification.k_anonymity.quasi_identifiers[\(i)]") else { continue }
                let allowed = DeidentificationPolicy.quasiIdentifierFields
                guard allowed.contains(name) else {
                    error(q, "deidentification.k_anonymity.quasi_identifiers[\(i)]", "unknown quasi-identifier '\(name)'", hint: "one of: \(allowed.joined(separator: ", "))")
                    continue
                }
                qids.append(name)
            }
            var sensitive: [String]?
            if let node = k["sensitive"] {
                var names: [String] = []
                for (i, item) in (sequence(node, "deidentification.k_anonymity.sensitive") ?? []).enumerated() {
                    let path = "deidentification.k_anonymity.sensitive[\(i)]"
                    guard let name = string(item, path) else { continue }
                    let parts = name.split(separator: ".", maxSplits: 1).map(String.init)
                    let table = parts.first ?? ""
                    let tableOK = table == "consent" || DataType(rawValue: table) != nil
                    guard parts.count == 2, tableOK, let fields = DeidentificationPolicy.fieldNames(of: table), fields.contains(parts[1]) else {
                        error(item, path, "expected consent.<field> or <data type>.<field>, e.g. medication_log.text", hint: "sensitive fields are published outside participants.csv")
                        continue
                    }
                    if !names.contains(name) { names.append(name) }
                }
                sensitive = names
            }
            var enforce: Bool?
            if let node = k["record_attributes"], let text = string(node, "deidentification.k_anonymity.record_attributes") {
                if text == "enforce" || text == "state" {
                    enforce = text == "enforce"
                } else {
                    error(node, "deidentification.k_anonymity.record_attributes", "expected enforce or state", hint: "enforce (the default) also reaches k over what an acquaintance knows from the records; state only states it")
                }
            }
            if let value { kAnonymity = .init(k: value, quasiIdentifiers: qids, sensitive: sensitive, enforceRecordAttributes: enforce) }
        }
        var fields: [String: FieldRule] = [:]
        if let fieldNode = m["fields"] {
            if case let .mapping(mapping) = fieldNode {
                for (keyNode, value) in mapping {
                    let key = keyNode.scalar?.string ?? ""
                    let path = "deidentification.fields.\(key)"
                    guard let rule = readFieldRule(key: key, keyNode: keyNode, value: value, path: path) else { continue }
                    fields[key] = rule
                }
            } else {
                error(fieldNode, "deidentification.fields", "expected a mapping of table.field: transform")
            }
        }
        guard let shift else { return nil }
        return DeidentificationPolicy(dateShift: shift, kAnonymity: kAnonymity, fields: fields)
    }

    func readFieldRule(key: String, keyNode: Node, value: Node, path: String) -> FieldRule? {
        let parts = key.split(separator: ".", maxSplits: 1).map(String.init)
        guard parts.count == 2 else {
            error(keyNode, path, "expected table.field, e.g. participant.zip")
            return nil
        }
        let (table, field) = (parts[0], parts[1])
        guard let names = DeidentificationPolicy.fieldNames(of: table) else {
            let hint = Suggest.closest(to: table, in: DeidentificationPolicy.tables).map { "did you mean '\($0)'?" }
                ?? "tables: \(DeidentificationPolicy.tables.joined(separator: ", "))"
            error(keyNode, path, "unknown table '\(table)'", hint: hint)
            return nil
        }
        guard names.contains(field) else {
            let hint = Suggest.closest(to: field, in: names).map { "did you mean '\(table).\($0)'?" } ?? "fields: \(names.joined(separator: ", "))"
            error(keyNode, path, "unknown field '\(field)' of \(table)", hint: hint)
            return nil
        }
        var rule: FieldRule?
        switch value {
        case .scalar:
            if let transform = enumValue(value, path, Transform.self) { rule = FieldRule(transform) }
        case .mapping:
            guard let r = mapping(value, path, keys: ["transform", "bins", "map", "other"], required: ["transform"]),
                let transform = enumValue(r["transform"], "\(path).transform", Transform.self)
            else { return nil }
            var bins: [Double]?
            if let b = r["bins"] {
                bins = (sequence(b, "\(path).bins") ?? []).enumerated().compactMap { double($1, "\(path).bins[\($0)]", range: -1e12...1e12) }
                if let edges = bins, edges != edges.sorted() || Set(edges).count != edges.count {
                    error(b, "\(path).bins", "bin edges must increase")
                }
            }
            var map: [String: String]?
            if let mapNode = r["map"] {
                if case let .mapping(mm) = mapNode {
                    map = [:]
                    for (k, v) in mm { if let from = k.scalar?.string, let to = string(v, "\(path).map.\(from)") { map?[from] = to } }
                } else {
                    error(mapNode, "\(path).map", "expected a mapping of value: generalized value")
                }
            }
            let other = r["other"].flatMap { string($0, "\(path).other") }
            rule = FieldRule(transform, bins: bins, map: map, other: other)
        default:
            error(value, path, "expected a transform name or a mapping with 'transform:'")
        }
        guard let rule else { return nil }
        if rule.transform == .ageBand, rule.bins == nil {
            error(value, path, "age_band needs bins", hint: "write { transform: age_band, bins: [18, 30, 45, 60, 75, 90] }")
        }
        if rule.transform == .generalize, rule.bins == nil, rule.map == nil {
            error(value, path, "generalize needs bins or map")
        }
        let allowed = DeidentificationPolicy.allowedTransforms(table: table, field: field)
        guard allowed.contains(rule.transform) else {
            error(value, path, "'\(rule.transform.rawValue)' does not apply to \(key)", hint: "allowed: \(allowed.map(\.rawValue).sorted().joined(separator: ", "))")
            return nil
        }
        return rule
    }

    func readExport(_ node: Node?) -> ExportSettings? {
        guard let m = mapping(node, "export", keys: ["formats"], required: ["formats"]) else { return nil }
        var formats: [ExportFormat] = []
        for (i, item) in (sequence(m["formats"], "export.formats") ?? []).enumerated() {
            if let format = enumValue(item, "export.formats[\(i)]", ExportFormat.self), !formats.contains(format) { formats.append(format) }
        }
        if formats.isEmpty { error(m["formats"] ?? node, "export.formats", "list at least one format: csv, json, fhir") }
        return ExportSettings(formats: formats)
    }

    func checkTemplates(_ p: StudyProtocol, root: URL, node: Node) {
        var paths = p.consent.documents.enumerated().map { ($1.template, "consent.documents[\($0)].template") }
        if let reminder = p.compliance.reminderTemplate { paths.append((reminder, "compliance.reminder_template")) }
        for (path, key) in paths where !FileManager.default.fileExists(atPath: root.appendingPathComponent(path).path) {
            error(self.node(at: key, in: node), key, "template '\(path)' does not exist under \(root.path)", hint: "create it, or fix the path")
        }
    }

    /// The node at a key path such as `consent.documents[0].template`, so a problem found after
    /// reading (a missing template) still names its line.
    func node(at keyPath: String, in root: Node) -> Node? {
        var current: Node? = root
        for part in keyPath.split(separator: ".") {
            guard let open = part.firstIndex(of: "["), part.hasSuffix("]") else {
                current = current?[String(part)]
                continue
            }
            current = current?[String(part[..<open])]
            guard let index = Int(part[part.index(after: open)..<part.index(before: part.endIndex)]) else { return nil }
            current = current?[index]
        }
        return current
    }

    /// `medication_codes`: medication name → RxNorm concept id (RXCUI, digits), e.g.
    /// `naproxen: "7258"`. Names are matched without regard to case.
    func readMedicationCodes(_ node: Node?) -> [String: String] {
        guard let node else { return [:] }
        guard case let .mapping(mapping) = node else {
            error(node, "medication_codes", "expected a mapping of medication name: RxNorm code, e.g. naproxen: \"7258\"")
            return [:]
        }
        var codes: [String: String] = [:]
        for (keyNode, value) in mapping {
            let name = (keyNode.scalar?.string ?? "").trimmingCharacters(in: .whitespaces)
            let path = "medication_codes.\(name)"
            guard !name.isEmpty else {
                error(keyNode, "medication_codes", "a medication name must not be empty")
                continue
            }
            guard let code = string(value, path) else { continue }
            guard code.range(of: "^[0-9]{1,10}$", options: .regularExpression) != nil else {
                error(value, path, "expected an RxNorm concept id (RXCUI, digits only), e.g. \"7258\"", hint: "look the ingredient up at https://mor.nlm.nih.gov/RxNav")
                continue
            }
            if codes[name.lowercased()] != nil {
                error(keyNode, path, "names a medication twice (names are matched without regard to case)")
                continue
            }
            codes[name.lowercased()] = code
        }
        return codes
    }
}

/// Numbers in generated rule descriptions: whole numbers without a fraction.
enum RuleText {
    static func number(_ value: Double) -> String {
        value.rounded() == value && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }
}
