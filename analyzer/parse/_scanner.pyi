# The compiled line scanner (analyzer/parse/_scanner.c); analyzer.parse.scanner wraps it.

_Pair = tuple[object, object]  # an Arrow array as PyCapsules (schema, array)

def scan(
    data: bytes, first_line: int, in_header: bool, all_ascii: bool, /
) -> tuple[bool, tuple[int, int, int, int], _Pair, _Pair, _Pair, _Pair, _Pair, bytes] | None: ...
def constants() -> dict[str, object]: ...
