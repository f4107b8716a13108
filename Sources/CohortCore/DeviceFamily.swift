/// The product family of an Apple device as the Health app names it: `Apple Watch`, `iPhone`,
/// `iPad`, `iPod`. Apple Health imports keep a device's hardware model identifier (`Watch6,2`,
/// `iPhone14,5`) or its model (`Watch`) as the record's source, since a person's name can be in
/// the device's name; a protocol's source map (`records.source: generalize, map: {"Apple Watch":
/// smartwatch, "iPhone": phone}`) names families. The generalize transform falls back to a
/// value's family when the map does not name the value itself, so a watch's records export as
/// `smartwatch`, not `other`.
package enum DeviceFamily {
    /// The family of a hardware model identifier (`Watch2,4` → `Apple Watch`) or a bare model
    /// (`Watch` → `Apple Watch`), nil for anything else (a product name, another vendor's model).
    public static func apple(_ source: String) -> String? {
        let families: [(prefix: String, family: String)] = [("Watch", "Apple Watch"), ("iPhone", "iPhone"), ("iPad", "iPad"), ("iPod", "iPod")]
        for (prefix, family) in families where source.hasPrefix(prefix) {
            let rest = source.dropFirst(prefix.count)
            if rest.isEmpty { return family }
            // `<major>,<minor>`, both digits: Apple's hardware identifiers.
            let parts = rest.split(separator: ",", omittingEmptySubsequences: false)
            if parts.count == 2, parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }) { return family }
        }
        return nil
    }
}
