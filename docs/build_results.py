"""Copy the Markdown summaries that the sweeps write (docs/results/*.md) into docs/results.md.

docs/results.md holds the prose; each summary sits between an include marker and an end marker::

    <!-- include results/table1.md -->
    ...replaced by the file's text, its headings one level deeper...
    <!-- end include -->

Run after a sweep: ``python docs/build_results.py``. Nothing else in docs/results.md changes.
"""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
BLOCK = re.compile(r"(<!-- include (?P<path>\S+) -->\n).*?(<!-- end include -->)", re.S)


def demote(text):
    """Headings one level deeper (the summaries start at ###, results.md sections at ##)."""
    return re.sub(r"^(#+) ", lambda m: "#" + m.group(1) + " ", text, flags=re.M)


def build(path=os.path.join(HERE, "results.md")):
    with open(path) as fh:
        page = fh.read()

    def fill(match):
        with open(os.path.join(HERE, match.group("path"))) as fh:
            body = demote(fh.read().strip())
        return f"{match.group(1)}{body}\n{match.group(3)}"

    new, count = BLOCK.subn(fill, page)
    with open(path, "w") as fh:
        fh.write(new)
    return count


if __name__ == "__main__":
    print(f"filled {build()} include blocks")
    sys.exit(0)
