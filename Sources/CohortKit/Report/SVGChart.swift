import CohortCore

/// Inline SVG charts for the report pages: no script, no external resource, colours from the
/// page's stylesheet (classes), a `<title>` and `role="img"` for assistive technology. Every
/// chart is followed on the page by a table holding the same figures.
enum SVGChart {
    /// Vertical bars, one per label, with a value axis from 0 to the largest value.
    static func bars(id: String, title: String, labels: [String], values: [Int]) -> Markup {
        let width = 720.0, height = 220.0, left = 44.0, bottom = 40.0, top = 12.0
        let plotWidth = width - left - 8, plotHeight = height - bottom - top
        let maxValue = max(1, values.max() ?? 1)
        let slot = plotWidth / Double(max(1, values.count))
        var parts: [Markup] = []
        for tick in ticks(upTo: maxValue) {
            let y = top + plotHeight - plotHeight * Double(tick) / Double(maxValue)
            parts.append(
                "<line class=\"grid\" x1=\"\(left, digits: 1)\" x2=\"\(width - 8, digits: 1)\" y1=\"\(y, digits: 1)\" y2=\"\(y, digits: 1)\"/><text class=\"axis\" x=\"\(left - 6, digits: 1)\" y=\"\(y + 4, digits: 1)\" text-anchor=\"end\">\(tick)</text>"
            )
        }
        let labelEvery = max(1, Int((Double(values.count) / 12).rounded(.up)))
        for (index, value) in values.enumerated() {
            let barHeight = plotHeight * Double(value) / Double(maxValue)
            let x = left + Double(index) * slot + slot * 0.15
            parts.append(
                "<rect class=\"bar\" x=\"\(x, digits: 1)\" y=\"\(top + plotHeight - barHeight, digits: 1)\" width=\"\(slot * 0.7, digits: 1)\" height=\"\(barHeight, digits: 1)\"/>"
            )
            if index % labelEvery == 0, index < labels.count {
                parts.append(
                    "<text class=\"axis\" x=\"\(x + slot * 0.35, digits: 1)\" y=\"\(height - bottom + 16, digits: 1)\" text-anchor=\"middle\">\(labels[index])</text>")
            }
        }
        return frame(id: id, title: title, width: width, height: height, body: Markup(parts))
    }

    /// A rate line (0–100 %) per week with a dashed threshold line; weeks without a rate are gaps.
    static func trend(id: String, title: String, labels: [String], rates: [Double?], threshold: Double) -> Markup {
        let width = 720.0, height = 220.0, left = 44.0, bottom = 40.0, top = 12.0
        let plotWidth = width - left - 16, plotHeight = height - bottom - top
        func y(_ rate: Double) -> Double { top + plotHeight - plotHeight * min(1, max(0, rate)) }
        let step = rates.count > 1 ? plotWidth / Double(rates.count - 1) : 0
        func x(_ index: Int) -> Double { left + (rates.count > 1 ? Double(index) * step : plotWidth / 2) }
        var parts: [Markup] = []
        for percent in stride(from: 0, through: 100, by: 25) {
            let yy = y(Double(percent) / 100)
            parts.append(
                "<line class=\"grid\" x1=\"\(left, digits: 1)\" x2=\"\(width - 16, digits: 1)\" y1=\"\(yy, digits: 1)\" y2=\"\(yy, digits: 1)\"/><text class=\"axis\" x=\"\(left - 6, digits: 1)\" y=\"\(yy + 4, digits: 1)\" text-anchor=\"end\">\(percent)%</text>"
            )
        }
        let ty = y(threshold)
        parts.append(
            "<line class=\"threshold\" x1=\"\(left, digits: 1)\" x2=\"\(width - 16, digits: 1)\" y1=\"\(ty, digits: 1)\" y2=\"\(ty, digits: 1)\"/><text class=\"axis threshold-label\" x=\"\(width - 18, digits: 1)\" y=\"\(ty - 5, digits: 1)\" text-anchor=\"end\">threshold \(percent(threshold))</text>"
        )
        var path = ""
        var points: [Markup] = []
        var penDown = false
        for (index, rate) in rates.enumerated() {
            guard let rate else {
                penDown = false
                continue
            }
            path += (penDown ? "L" : "M") + Markup.StringInterpolation.format(x(index), digits: 1) + "," + Markup.StringInterpolation.format(y(rate), digits: 1)
            penDown = true
            points.append("<circle class=\"point\" cx=\"\(x(index), digits: 1)\" cy=\"\(y(rate), digits: 1)\" r=\"3\"/>")
        }
        if !path.isEmpty { parts.append("<path class=\"line\" d=\"\(path)\"/>") }
        parts += points
        let labelEvery = max(1, Int((Double(rates.count) / 12).rounded(.up)))
        for index in labels.indices where index % labelEvery == 0 {
            parts.append("<text class=\"axis\" x=\"\(x(index), digits: 1)\" y=\"\(height - bottom + 16, digits: 1)\" text-anchor=\"middle\">\(labels[index])</text>")
        }
        return frame(id: id, title: title, width: width, height: height, body: Markup(parts))
    }

    /// Participant × day: one row per participant (labelled by study code), one column per
    /// calendar day from `firstDay` to `lastDay`; a day is met, missed, or outside the
    /// participant's counted window (left blank). Cells are drawn as one path per state.
    static func heatmap(id: String, title: String, rows: [StudyReport.HeatmapRow], firstDay: CivilDate, lastDay: CivilDate) -> Markup {
        let dayCount = max(1, firstDay.days(to: lastDay) + 1)
        let labelWidth = 70.0, top = 22.0, cellHeight = 12.0
        let cellWidth = max(2.0, min(12.0, 900.0 / Double(dayCount)))
        let width = labelWidth + cellWidth * Double(dayCount) + 4
        let height = top + cellHeight * Double(rows.count) + 4
        var met = "", missed = ""
        var labels: [Markup] = []
        for (rowIndex, row) in rows.enumerated() {
            let y = top + Double(rowIndex) * cellHeight
            labels.append("<text class=\"axis\" x=\"\(labelWidth - 6, digits: 1)\" y=\"\(y + cellHeight - 2, digits: 1)\" text-anchor=\"end\">\(row.code)</text>")
            let start = firstDay.days(to: row.firstDay)
            for (offset, isMet) in row.days.enumerated() {
                let column = start + offset
                guard column >= 0 && column < dayCount else { continue }
                let cell =
                    "M" + Markup.StringInterpolation.format(labelWidth + Double(column) * cellWidth, digits: 1) + ","
                    + Markup.StringInterpolation.format(y, digits: 1) + "h" + Markup.StringInterpolation.format(cellWidth - (cellWidth > 3 ? 1 : 0), digits: 1)
                    + "v" + Markup.StringInterpolation.format(cellHeight - 1, digits: 1) + "h-" + Markup.StringInterpolation.format(cellWidth - (cellWidth > 3 ? 1 : 0), digits: 1) + "z"
                if isMet { met += cell } else { missed += cell }
            }
        }
        // Month marks along the top.
        var marks: [Markup] = []
        for offset in 0..<dayCount {
            let day = firstDay.adding(days: offset)
            guard day.day == 1 || offset == 0 else { continue }
            marks.append(
                "<text class=\"axis\" x=\"\(labelWidth + Double(offset) * cellWidth, digits: 1)\" y=\"14\">\(day.description.prefix(7))</text>")
        }
        let body: Markup = """
            \(marks)\(labels)<path class="met" d="\(met)"/><path class="missed" d="\(missed)"/>
            """
        return frame(id: id, title: title, width: width, height: height, body: body)
    }

    static func frame(id: String, title: String, width: Double, height: Double, body: Markup) -> Markup {
        """
        <svg class="chart" id="\(id)" role="img" aria-labelledby="\(id)-title" viewBox="0 0 \(width, digits: 1) \(height, digits: 1)" width="\(width, digits: 0)" height="\(height, digits: 0)" xmlns="http://www.w3.org/2000/svg"><title id="\(id)-title">\(title)</title>\(body)</svg>
        """
    }

    /// Up to five round tick values from 0 to `maxValue`.
    static func ticks(upTo maxValue: Int) -> [Int] {
        let rough = max(1, maxValue / 4)
        var step = 1
        while step * 10 <= rough { step *= 10 }
        if step * 5 <= rough { step *= 5 } else if step * 2 <= rough { step *= 2 }
        return Array(stride(from: 0, through: maxValue, by: step))
    }

    /// `87%` (rounded to a whole percent).
    static func percent(_ rate: Double) -> String { "\(Int((rate * 100).rounded()))%" }
}
