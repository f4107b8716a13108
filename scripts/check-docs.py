#!/usr/bin/env python3
"""Fails when a public declaration of CohortKit has no `///` doc comment.

A declaration is public when it says `public` or `open`, when it sits directly inside a
`public extension`, when it is a `case` of a public enum, or when it is a requirement of a public
protocol. It is documented when the nearest line above it that is not an attribute (`@…`) is a
`///` line or the end of a `/** … */` block. Extensions themselves need no comment (their members
do), nor `public import`. String literals (including the multi-line templates compiled into
EmbeddedResources.swift) and comments are blanked before braces are counted.
Usage: scripts/check-docs.py [folder …]   (default Sources/CohortKit; exit 0 = all documented,
1 = the missing ones as file:line: declaration)
"""
import pathlib
import re
import sys

root = pathlib.Path(__file__).resolve().parent.parent
folders = [pathlib.Path(arg) for arg in sys.argv[1:]] or [root / "Sources" / "CohortKit"]

declaration_keywords = (
    r"(?:struct|class|enum|protocol|actor|typealias|associatedtype|func|init\??|init!|var|let|case|subscript"
    r"|indirect\s+case|deinit|operator|macro)"
)
modifiers = (
    r"(?:(?:static|class|final|override|mutating|nonmutating|nonisolated|required|convenience|dynamic|lazy|"
    r"indirect|weak|unowned|consuming|borrowing|isolated|public|open|package|internal|private|fileprivate)"
    r"(?:\([a-z]+\))?\s+)*"
)
attribute_prefix = r"(?:@[A-Za-z_][A-Za-z0-9_]*(?:\([^()]*\))?\s+)*"
declaration = re.compile(r"^\s*" + attribute_prefix + modifiers + declaration_keywords + r"\b")
explicitly_public = re.compile(r"^\s*" + attribute_prefix + modifiers.replace("public|open|", "") + r"(?:public|open)(?:\([a-z]+\))?\s")
restricted = re.compile(r"\b(?:private|fileprivate|internal|package)\b")
extension_header = re.compile(r"^\s*" + attribute_prefix + r"(?:(public|open|package|internal|private|fileprivate)\s+)?extension\b")
type_header = re.compile(r"^\s*" + attribute_prefix + modifiers + r"(enum|protocol|struct|class|actor)\s")
attribute_line = re.compile(r"^\s*@")


def blank_strings_and_comments(lines):
    """Returns the lines with string contents and comments replaced by spaces (braces counted on these)."""
    code = []
    in_block_comment = False
    multiline_delimiter = None  # e.g. '"""' or '#"""'
    for line in lines:
        out = []
        i = 0
        while i < len(line):
            if multiline_delimiter:
                end = line.find(multiline_delimiter, i)
                if end < 0:
                    i = len(line)
                    continue
                i = end + len(multiline_delimiter)
                multiline_delimiter = None
                out.append('""')
                continue
            if in_block_comment:
                end = line.find("*/", i)
                if end < 0:
                    i = len(line)
                    continue
                i = end + 2
                in_block_comment = False
                continue
            if line.startswith("//", i):
                break
            if line.startswith("/*", i):
                in_block_comment = True
                i += 2
                continue
            match = re.match(r'(#*)("""|")', line[i:])
            if match:
                hashes, quote = match.group(1), match.group(2)
                closing = quote + hashes
                start = i + len(match.group(0))
                if quote == '"""':
                    end = line.find(closing, start)
                    if end < 0:
                        multiline_delimiter = closing
                        i = len(line)
                        continue
                    i = end + len(closing)
                    out.append('""')
                    continue
                j = start
                while j < len(line):
                    if line[j] == "\\" and not hashes:
                        j += 2
                        continue
                    if line.startswith(closing, j):
                        break
                    j += 1
                i = j + len(closing)
                out.append('""')
                continue
            out.append(line[i])
            i += 1
        code.append("".join(out))
    return code


def is_documented(lines, index):
    """True when the nearest non-attribute line above `index` is a doc comment."""
    j = index - 1
    while j >= 0 and attribute_line.match(lines[j]):
        j -= 1
    if j < 0:
        return False
    above = lines[j].strip()
    return above.startswith("///") or above.endswith("*/")


def check(path):
    lines = path.read_text(encoding="utf-8").split("\n")
    code = blank_strings_and_comments(lines)
    missing = []
    # Each open brace's context: "public-extension", "public-enum", "public-protocol" or "other".
    stack = []
    pending = None
    for index, line in enumerate(code):
        context = stack[-1] if stack else "file"
        needs_doc = False
        if extension_header.match(line):
            access = extension_header.match(line).group(1)
            pending = "public-extension" if access in ("public", "open") else "other"
        elif declaration.match(line):
            public = bool(explicitly_public.match(line))
            if context == "public-extension" and not restricted.search(line.split("{")[0]):
                public = True
            if context == "public-protocol":
                public = True
            if context == "public-enum" and re.match(r"^\s*" + attribute_prefix + r"(?:indirect\s+)?case\s", line):
                public = True
            needs_doc = public
            header = type_header.match(line)
            if header and public:
                pending = {"enum": "public-enum", "protocol": "public-protocol"}.get(header.group(1), "other")
            else:
                pending = "other"
        if needs_doc and not is_documented(lines, index):
            shown = path.relative_to(root) if path.is_relative_to(root) else path
            missing.append(f"{shown}:{index + 1}: {lines[index].strip()}")
        for character in line:
            if character == "{":
                stack.append(pending or "other")
                pending = None
            elif character == "}":
                if stack:
                    stack.pop()
    return missing


missing = []
for folder in folders:
    for path in sorted(folder.rglob("*.swift")):
        missing += check(path)
if missing:
    print("\n".join(missing))
    print(f"error: {len(missing)} public declaration(s) without a /// doc comment (scripts/check-docs.py)", file=sys.stderr)
    sys.exit(1)
print("check-docs: every public declaration is documented")
