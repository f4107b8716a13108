import Foundation

/// The source a sample is stored with: the device's product type, never its name.
///
/// The Health app writes `sourceName` as the name the owner gave the device ("Simon's iPhone")
/// and `device` as `<<HKDevice: 0x…>, name:Apple Watch, manufacturer:Apple Inc., model:Watch,
/// hardware:Watch6,2, software:9.2>`, whose `name` can be a person's too. Only the hardware
/// product type (`Watch6,2`) or, without one, the model (`Watch`) is kept; without a device,
/// the product family named in `sourceName` (`iPhone`, `Apple Watch`, `iPad`), else `other`.
package enum DeviceSource {
    /// The product type in `device`, or the family in `sourceName`, or `other`.
    package static func sanitized(device: String?, sourceName: String?) -> String {
        if let device {
            if let hardware = field("hardware", in: device) { return hardware }
            if let model = field("model", in: device) { return model }
        }
        if let sourceName {
            let lower = sourceName.lowercased()
            if lower.contains("watch") { return "Apple Watch" }
            if lower.contains("iphone") { return "iPhone" }
            if lower.contains("ipad") { return "iPad" }
        }
        return "other"
    }

    /// The value of `key:` in an HKDevice description, when it is a plain product string
    /// (letters, digits, `,`-free except between digits, `.`, `-`, `_`, space; at most 40 characters).
    static func field(_ key: String, in device: String) -> String? {
        guard let range = device.range(of: ", \(key):") ?? device.range(of: "<\(key):") else { return nil }
        let rest = device[range.upperBound...]
        // Values end at ", " (the next key) or ">".
        var value = Substring(rest)
        if let end = rest.range(of: ", ") { value = rest[..<end.lowerBound] }
        if let end = value.firstIndex(of: ">") { value = value[..<end] }
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty, trimmed.count <= 40, !trimmed.contains("'"), !trimmed.contains("\u{2019}"),
            trimmed.allSatisfy({ $0.isLetter || $0.isNumber || ",._- ".contains($0) })
        else { return nil }
        return trimmed
    }
}
