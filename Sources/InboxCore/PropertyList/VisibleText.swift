extension String {
    /// The text as a message may quote it: control, format and unusual space characters escaped (`\t`, `\u{200B}`),
    /// so that an invisible character in an identifier shows where it is, then cut to 60 characters.
    public var visible: String {
        var result = ""
        for scalar in unicodeScalars {
            switch scalar {
            case "\t": result += "\\t"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\\": result += "\\\\"
            default:
                let category = scalar.properties.generalCategory
                let invisible = category == .control || category == .format || category == .lineSeparator
                    || category == .paragraphSeparator || (category == .spaceSeparator && scalar != " ")
                    || category == .unassigned || category == .privateUse || category == .surrogate
                if invisible {
                    result += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result.abbreviated
    }
}
