#!/usr/bin/env python3
"""Parses HTML files with html5lib in strict mode (the WHATWG parsing algorithm, every parse
error fatal). Prints `ok FILE` or `FILE:line:col: error` lines; exit 1 on any error."""
import sys

import html5lib

failed = False
for path in sys.argv[1:]:
    parser = html5lib.HTMLParser(strict=True)
    try:
        with open(path, "rb") as handle:
            parser.parse(handle.read().decode("utf-8"))
        print(f"ok {path}")
    except Exception as error:  # html5lib raises ParseError on the first error in strict mode
        failed = True
        for (line, col), code, _ in parser.errors or [((0, 0), str(error), None)]:
            print(f"{path}:{line}:{col}: {code}")
sys.exit(1 if failed else 0)
