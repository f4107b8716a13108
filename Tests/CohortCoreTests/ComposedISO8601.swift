@testable import CohortCore

extension Timestamp {
    /// ISO 8601 text composed from Strings, the way `iso8601` was built before it went through
    /// bytes: the reference `ByteText` and `Timestamp.iso8601` are tested against.
    var composedISO8601: String {
        let localMs = epochMilliseconds + Int64(utcOffsetSeconds) * 1000
        let days = Self.floorDiv(localMs, 86_400_000)
        let msOfDay = localMs - days * 86_400_000
        let date = CivilDate(daysSinceEpoch: Int(days))
        let seconds = Int(msOfDay / 1000)
        let millis = Int(msOfDay % 1000)
        var text = date.description + "T" + CivilDate.pad(seconds / 3600, 2) + ":" + CivilDate.pad(seconds / 60 % 60, 2) + ":"
            + CivilDate.pad(seconds % 60, 2)
        if millis != 0 { text += "." + CivilDate.pad(millis, 3) }
        let offset = Int(utcOffsetSeconds)
        if offset == 0 { return text + "Z" }
        let magnitude = abs(offset) / 60
        return text + (offset < 0 ? "-" : "+") + CivilDate.pad(magnitude / 60, 2) + ":" + CivilDate.pad(magnitude % 60, 2)
    }
}
