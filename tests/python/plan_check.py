"""An independent check of a program's memory plan, from what ``Program.describe()`` reports.

Root arena tensors (not views) in one memory region that are live at a common op never share
bytes, except an op output written in place over an input that dies at that op
(``in_place_of``) and the embeddings of the plan report (a slice's or a cat input's bytes inside
the tensor it is a contiguous block of, at the reported offset; parts of one host may overlap). Views share their root's offset and region. Weights copied into RAM at
start-up stay there for the whole run, so they share bytes with no arena tensor. Everything
lies inside its region. The header's lower bound is the largest total of 16-byte-aligned root
tensors live at one op (all regions), counting bytes shared in place, and the union of the spans
of a host and its live parts, once.
"""


def _aligned(n: int) -> int:
    return (n + 15) // 16 * 16


def _root(tensors: list[dict], i: int) -> int:
    a = tensors[i].get("alias_of", -1)
    return a if a >= 0 else i


def _in_place_pair(tensors: list[dict], a: int, b: int) -> tuple[int, int] | None:
    """(output, input) when one of roots a, b is written in place over the other."""
    for out, inp in ((a, b), (b, a)):
        src = tensors[out].get("in_place_of", -1)
        if src >= 0 and _root(tensors, src) == inp:
            return out, inp
    return None


def _shared(ta: dict, tb: dict) -> int:
    return max(0, min(ta["offset"] + _aligned(ta["bytes"]), tb["offset"] + _aligned(tb["bytes"]))
               - max(ta["offset"], tb["offset"]))


def check_plan(program) -> None:
    d = program.describe()
    tensors = d["tensors"]
    roots = [i for i, t in enumerate(tensors) if t["storage"] == "arena" and t.get("alias_of", -1) < 0
             and t["first_op"] <= t["last_op"]]
    for i, t in enumerate(tensors):
        if t["storage"] == "copied":
            assert t["copy_offset"] % 16 == 0 and t["copy_offset"] + t["bytes"] <= d["region_bytes"][t["region"]]
            for r in roots:
                if tensors[r]["region"] == t["region"]:
                    assert _shared(tensors[r], dict(offset=t["copy_offset"], bytes=t["bytes"])) == 0, \
                        f"{tensors[r]['name']} overlaps the copied weights {t['name']}"
        if t["storage"] != "arena" or t["first_op"] > t["last_op"]:  # never used: never placed
            continue
        assert t["offset"] % 16 == 0, t["name"]
        assert t["offset"] + t["bytes"] <= d["region_bytes"][t["region"]], t["name"]
        root = tensors[_root(tensors, i)]
        assert (t["offset"], t["region"]) == (root["offset"], root["region"]), f"view {t['name']} moved off its root"

    embedded = d["plan"].get("embedded", [])
    host_of = {e["part"]: e["host"] for e in embedded}
    for e in embedded:
        part, host = tensors[e["part"]], tensors[e["host"]]
        assert (part["offset"], part["region"]) == (host["offset"] + e["offset"], host["region"]), part["name"]

    def same_host(a, b):
        return host_of.get(a, a) == host_of.get(b, b) and (a in host_of or b in host_of)

    def together(a, b):
        return (tensors[a]["region"] == tensors[b]["region"] and tensors[a]["first_op"] <= tensors[b]["last_op"]
                and tensors[b]["first_op"] <= tensors[a]["last_op"])

    shared_at = []  # (first op, last op, bytes) of in-place overlaps
    for k, a in enumerate(roots):
        for b in roots[k + 1:]:
            if not together(a, b) or _shared(tensors[a], tensors[b]) == 0 or same_host(a, b):
                continue
            pair = _in_place_pair(tensors, a, b)
            assert pair, f"{tensors[a]['name']} and {tensors[b]['name']} are live together and share bytes"
            out, inp = pair
            assert tensors[out]["first_op"] == tensors[inp]["last_op"], "in place over an input that lives on"
            shared_at.append((tensors[out]["first_op"], tensors[inp]["last_op"], _shared(tensors[a], tensors[b])))
    steps = range(-1, len(d["ops"]) + 1)

    def live(t, s):
        return tensors[t]["first_op"] <= s <= tensors[t]["last_op"]

    def embedded_overlap(s):  # bytes a host and its live parts share, beyond the union of their spans
        extra = 0
        for host in set(host_of.values()):
            spans = sorted((tensors[t]["offset"], tensors[t]["offset"] + _aligned(tensors[t]["bytes"]))
                           for t in [host] + [p for p, h in host_of.items() if h == host] if live(t, s))
            union, reached = 0, None
            for lo, hi in spans:
                start = lo if reached is None else max(lo, reached)
                union += max(0, hi - start)
                reached = hi if reached is None else max(reached, hi)
            extra += sum(hi - lo for lo, hi in spans) - union
        return extra

    bound = max(sum(_aligned(tensors[t]["bytes"]) for t in roots if live(t, s))
                - sum(n for first, last, n in shared_at if first <= s <= last) - embedded_overlap(s) for s in steps)
    assert d["arena_lower_bound"] == bound, (d["arena_lower_bound"], bound)
    assert sum(d["region_bytes"]) >= bound
