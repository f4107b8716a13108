#!/usr/bin/env python3
"""Turns `cohort --experimental-dump-help` (swift-argument-parser's command-tree JSON) into a man page.

Usage: cohort --experimental-dump-help | scripts/manpage.py [--date YYYY-MM-DD] > cohort.1
One page, cohort(1): NAME, SYNOPSIS, DESCRIPTION, then one subsection per command (every level of the
tree) with its options, EXIT STATUS and ENVIRONMENT. Only the standard library; roff the way man(7)
and groff_man(7) describe it.
"""
import json
import sys
import datetime


def esc(text):
    """Escapes text for roff: backslashes, and a leading dot or quote that would start a request."""
    text = (text or "").replace("\\", "\\e").replace("-", "\\-")
    # Non-ASCII characters as groff's Unicode escapes, so any troff reads the page without preconv.
    text = "".join(c if ord(c) < 128 else "\\[u%04X]" % ord(c) for c in text)
    lines = []
    for line in text.split("\n"):
        if line.startswith((".", "'")):
            line = "\\&" + line
        lines.append(line)
    return "\n".join(lines)


def names(argument):
    out = []
    for n in argument.get("names", []):
        prefix = "--" if n["kind"] == "long" else "-"
        out.append("\\fB" + esc(prefix + n["name"]) + "\\fR")
    return ", ".join(out)


def option_lines(argument):
    kind = argument["kind"]
    value = argument.get("valueName")
    if kind == "positional":
        head = "\\fI" + esc(value or "value") + "\\fR" + (" ..." if argument.get("isRepeating") else "")
    else:
        head = names(argument)
        if kind == "option":
            head += " \\fI" + esc(value or "value") + "\\fR"
    body = esc(argument.get("abstract", ""))
    if argument.get("discussion"):
        discussion = argument["discussion"]
        if isinstance(discussion, dict):
            discussion = discussion.get("preamble", "") or ""
        body += " " + esc(discussion) if discussion else ""
    if argument.get("defaultValue") not in (None, ""):
        body += " (default: " + esc(str(argument["defaultValue"])) + ")"
    return [".TP", head, body]


def paragraphs(text):
    """Discussion text: prose paragraphs filled by roff; indented example lines kept as they are."""
    out = []
    for block in (text or "").strip("\n").split("\n\n"):
        lines = block.split("\n")
        prose = [l for l in lines if not l.startswith("  ")]
        literal = [l for l in lines if l.startswith("  ")]
        if prose:
            out += [".PP", esc(" ".join(l.strip() for l in prose))]
        if literal:
            out += [".PP", ".nf", ".RS 4"] + [esc(l[2:]) for l in literal] + [".RE", ".fi"]
    return out


def command_section(command, path):
    full = " ".join(path)
    out = [".SS " + esc(full), esc(command.get("abstract", ""))]
    arguments = [a for a in command.get("arguments", []) if a.get("shouldDisplay", True)]
    synopsis = [esc(full)] + ["[\\fIoptions\\fR]"] if any(a["kind"] != "positional" for a in arguments) else [esc(full)]
    synopsis += ["\\fI" + esc(a.get("valueName", "value")) + "\\fR" + ("..." if a.get("isRepeating") else "") for a in arguments if a["kind"] == "positional"]
    if not command.get("subcommands"):
        out += [".PP", ".B " + synopsis[0]] if len(synopsis) == 1 else [".PP", "\\fB" + synopsis[0] + "\\fR " + " ".join(synopsis[1:])]
    out += paragraphs(command.get("discussion", ""))
    for argument in arguments:
        if argument.get("names") and any(n["name"] in ("help", "version") for n in argument["names"]) and len(path) > 1:
            continue
        out += option_lines(argument)
    for sub in command.get("subcommands", []) or []:
        out += command_section(sub, path + [sub["commandName"]])
    return out


def main():
    date = datetime.date.today().isoformat()
    if len(sys.argv) == 3 and sys.argv[1] == "--date":
        date = sys.argv[2]
    tool = json.load(sys.stdin)
    root = tool["command"]
    name = root["commandName"]
    lines = [
        '.TH "%s" "1" "%s" "%s" "User Commands"' % (name.upper(), date, name),
        ".SH NAME",
        esc(name) + " \\- " + esc(root.get("abstract", "")),
        ".SH SYNOPSIS",
        ".B " + esc(name),
        "\\fIcommand\\fR [\\fIoptions\\fR]",
        ".SH DESCRIPTION",
    ]
    lines += paragraphs(root.get("discussion", ""))
    lines += [".SH COMMANDS"]
    for sub in root.get("subcommands", []) or []:
        lines += command_section(sub, [name, sub["commandName"]])
    lines += [
        ".SH EXIT STATUS",
        "0 success; 1 a check failed; 2 usage error; 3 invalid input; 4 not found; 5 conflict; 6 security; 7 integrity; 8 refused by policy; 10 system or I/O error.",
        ".SH ENVIRONMENT",
        ".TP", ".B COHORT_WORKSPACE", "The workspace when \\fB\\-w\\fR is not given.",
        ".TP", ".B COHORT_LOCK_TIMEOUT", "Seconds a writer waits for another cohort command (default 60).",
        ".SH SEE ALSO",
        "openssl(1), sha256sum(1), tar(1)",
    ]
    sys.stdout.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
