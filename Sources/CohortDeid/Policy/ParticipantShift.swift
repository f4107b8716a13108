package import Foundation
package import CohortCore

/// One participant's date shift for one recipient: how many days their dates move, the time zone
/// their instants are re-anchored in, and the one UTC offset every published instant of theirs is
/// written at.
///
/// Why not simply add `days · 24 h`: records keep the participant's wall-clock rhythm (a day's
/// step count runs from local midnight to local midnight, a symptom log is made at 08:00 local
/// summer and winter), so in UTC, or at the offset observed at import, the real daylight-saving
/// transition shows as the day whose length or time of day changes by an hour, and the date shift
/// is that day minus the public transition date. Here an instant becomes local wall-clock time in
/// the participant's zone at the real instant, its date moves by ``days``, and it is resolved in
/// the same zone on the shifted date (a time in a spring-forward gap moves forward by the gap, an
/// ambiguous fall-back time takes the earlier instant, as the importer reads them). The published
/// data then follow the shifted calendar's own transitions, which are public dates.
///
/// Every instant is written at ``publishedOffsetSeconds`` — the zone's standard offset (no
/// daylight saving) at the export's creation — never at the offset observed at import, so neither
/// a DST change nor travel shows in the offsets.
package struct ParticipantShift: Sendable {
    /// Days every date and instant moves by (≤ 0).
    public let days: Int
    /// The zone instants are re-anchored in.
    public let zone: TimeZone
    /// The one UTC offset, in seconds, all published instants of the participant are written at.
    package let publishedOffsetSeconds: Int32
    private var offsets: ZoneOffsets
    /// Per kind, the last instant shifted through ``shiftSeries(_:start:end:)``: a participant
    /// records a few kinds, so a short array searched by kind, not a hashed dictionary (hashing
    /// the kind was about half of this method's cost per record).
    private var trackKinds: [RecordKind] = []
    private var tracks: [SeriesTrack] = []

    /// Where a kind's series stands: its last real and published instants (milliseconds), and
    /// whether it is running on elapsed time since a wall-clock jump.
    private struct SeriesTrack: Sendable {
        var lastReal: Int64
        var lastPublished: Int64
        var elapsed: Bool
    }

    /// Samples closer than this are a dense series: a wall-clock jump between them would show.
    static let denseGapMs: Int64 = 30 * 60_000

    /// The shift by `days` in `zone`, published at the zone's standard offset at `reference`, or
    /// at `publishedOffsetSeconds` when given (0 once k-anonymity generalized `utc_offset`).
    package init(days: Int, zone: TimeZone, reference: Timestamp, publishedOffsetSeconds: Int32? = nil) {
        self.days = days
        self.zone = zone
        self.publishedOffsetSeconds = publishedOffsetSeconds ?? Self.standardOffset(of: zone, at: reference)
        offsets = ZoneOffsets(zone: zone)
    }

    /// `zone`'s UTC offset without daylight saving at `instant`, in seconds
    /// (`secondsFromGMT − daylightSavingTimeOffset`).
    package static func standardOffset(of zone: TimeZone, at instant: Timestamp) -> Int32 {
        let date = instant.date
        return Int32(zone.secondsFromGMT(for: date) - Int(zone.daylightSavingTimeOffset(for: date).rounded()))
    }

    /// `seconds` as an ISO 8601 offset: `-05:00`, `+05:30`, and `+00:00` for UTC.
    package static func offsetText(_ seconds: Int32) -> String {
        let minutes = abs(Int(seconds)) / 60
        let hours = minutes / 60
        let rest = minutes % 60
        return (seconds < 0 ? "-" : "+") + (hours < 10 ? "0" : "") + String(hours) + ":" + (rest < 10 ? "0" : "") + String(rest)
    }

    /// ``publishedOffsetSeconds`` as text (`-05:00`), for the participant's `utc_offset` column.
    package var publishedOffset: String { Self.offsetText(publishedOffsetSeconds) }

    /// `instant` moved by ``days`` on the participant's wall clock, written at the published
    /// offset.
    public mutating func shift(_ instant: Timestamp) -> Timestamp {
        guard days != 0 else { return published(instant) }
        let localMs = instant.epochMilliseconds + Int64(offsets.offset(atUTC: instant.epochMilliseconds)) * 1000
        let shiftedLocal = localMs + Int64(days) * 86_400_000
        let offset = Timestamp.resolveOffset(localMs: shiftedLocal) { offsets.offset(atUTC: $0) }
        return Timestamp(epochMilliseconds: shiftedLocal - Int64(offset) * 1000, utcOffsetSeconds: publishedOffsetSeconds)
    }

    /// A record's start and end moved by ``days``, keeping a dense series (samples less than 30
    /// minutes apart, e.g. a heart rate every 5 minutes) free of a daylight-saving trace.
    ///
    /// Wall-clock re-anchoring (``shift(_:)``) maps a real 23-hour transition night onto an
    /// ordinary 24-hour one, so a dense series would show an hour without samples (spring) or two
    /// samples per instant (autumn) on the real transition night — the shift is then that night
    /// minus the public transition date. Here, where the wall-clock step between two samples of
    /// `kind` less than 30 minutes apart differs from their real interval, the series continues
    /// on elapsed time (each sample after the last by its real interval: same cadence, no gap, no
    /// duplicate) and rejoins the wall clock at its next natural gap (30 minutes or more, which
    /// grows or shrinks by the hour). The same holds at the shifted calendar's own transitions.
    /// A record with an end that runs on elapsed time keeps its real duration; one on the wall
    /// clock has its end re-anchored (a local-day aggregate stays a local day).
    package mutating func shiftSeries(_ kind: RecordKind, start: Timestamp, end: Timestamp?) -> (start: Timestamp, end: Timestamp?) {
        guard days != 0 else { return (published(start), end.map(published)) }
        let real = start.epochMilliseconds
        let wall = shift(start).epochMilliseconds
        var out = wall
        var elapsed = false
        // One look-up of the kind per record: the slot found here is read and then written in place.
        let slot = trackKinds.firstIndex(of: kind)
        if let slot {
            let track = tracks[slot]
            let gap = real - track.lastReal
            let wallGap = wall - track.lastPublished
            if track.elapsed {
                if gap >= Self.denseGapMs, wallGap >= Self.denseGapMs {
                    out = wall  // a natural gap: back on the wall clock
                } else {
                    out = track.lastPublished + gap
                    elapsed = true
                }
            } else if gap > 0, gap < Self.denseGapMs, wallGap != gap {
                out = track.lastPublished + gap
                elapsed = true
            }
        }
        let next = SeriesTrack(lastReal: real, lastPublished: out, elapsed: elapsed && out != wall)
        if let slot {
            tracks[slot] = next
        } else {
            trackKinds.append(kind)
            tracks.append(next)
        }
        let publishedStart = Timestamp(epochMilliseconds: out, utcOffsetSeconds: publishedOffsetSeconds)
        guard let end else { return (publishedStart, nil) }
        if elapsed {
            return (publishedStart, Timestamp(epochMilliseconds: out + end.epochMilliseconds - real, utcOffsetSeconds: publishedOffsetSeconds))
        }
        return (publishedStart, shift(end))
    }

    /// `instant` unshifted, written at the published offset (`keep`).
    public func published(_ instant: Timestamp) -> Timestamp {
        Timestamp(epochMilliseconds: instant.epochMilliseconds, utcOffsetSeconds: publishedOffsetSeconds)
    }

    /// 1 January 00:00 of the year `instant` falls in on the participant's wall clock, at the
    /// published offset (`year`).
    package mutating func yearStart(_ instant: Timestamp) -> Timestamp {
        let localMs = instant.epochMilliseconds + Int64(offsets.offset(atUTC: instant.epochMilliseconds)) * 1000
        let day = CivilDate(daysSinceEpoch: Int(Timestamp.floorDiv(localMs, 86_400_000)))
        let january = CivilDate(year: day.year, month: 1, day: 1) ?? day
        return Timestamp(
            epochMilliseconds: Int64(january.daysSinceEpoch) * 86_400_000 - Int64(publishedOffsetSeconds) * 1000,
            utcOffsetSeconds: publishedOffsetSeconds)
    }

    /// `date` moved by ``days``.
    public func shift(_ date: CivilDate) -> CivilDate { date.adding(days: days) }
}

/// A zone's UTC offset at UTC instants, remembering the two spans between transitions it looked
/// up last: a participant's records arrive in time order, so Foundation is asked again only when
/// a record crosses a transition (a few times a year) instead of several times per record.
private struct ZoneOffsets: Sendable {
    struct Span: Sendable {
        var start: Int64
        var end: Int64
        var offset: Int
    }

    let zone: TimeZone
    private var spans: [Span] = []

    init(zone: TimeZone) { self.zone = zone }

    /// The zone's offset in seconds at `ms` (milliseconds since 1970, UTC).
    mutating func offset(atUTC ms: Int64) -> Int {
        for span in spans where span.start <= ms && ms < span.end { return span.offset }
        let span = Self.span(containing: ms, in: zone)
        if spans.count == 2 { spans.removeFirst() }
        spans.append(span)
        return span.offset
    }

    /// A span of constant offset around `ms`, found by walking the zone's transitions forward
    /// from a day before it.
    private static func span(containing ms: Int64, in zone: TimeZone) -> Span {
        func date(_ ms: Int64) -> Date { Date(timeIntervalSince1970: Double(ms) / 1000) }
        var start = ms - 86_400_000
        for _ in 0..<8 {
            let offset = zone.secondsFromGMT(for: date(start))
            let next = zone.nextDaylightSavingTimeTransition(after: date(start)).map {
                Int64(($0.timeIntervalSince1970 * 1000).rounded())
            } ?? Int64.max
            guard next > start else { break }
            if next > ms {
                // Foundation's transitions are its daylight-saving ones: should a zone change its
                // standard offset in between, the span is not trusted.
                guard zone.secondsFromGMT(for: date(ms)) == offset else { break }
                return Span(start: start, end: next, offset: offset)
            }
            start = next
        }
        // Transitions Foundation does not report as such: answer this instant alone.
        return Span(start: ms, end: ms + 1, offset: zone.secondsFromGMT(for: date(ms)))
    }
}
