"""Where the blocks, ports and wires of a system diagram go.

Blocks stand in columns along the flange connections, left to right: each wired pair of ports votes for an
order (flange_a on the left of its block, flange_b on the right, signals flowing right, a connector's first port
on its left; a body's vote counts twice, as Modelica diagrams turn connectors rather than bodies) and the columns
are the longest paths of those orders. Separate subsystems stand one below the other. In a column blocks take the
row nearest their neighbours'; a port faces the blocks it is wired to. A wire between facing ports in neighbouring
columns is a curve; one that would cross blocks runs in a channel below its band of rows.

Rows wrap: a diagram is at most ``MAX_WIDTH`` (1,200 px) wide, so a subsystem with more columns than fit (4 at the
default margins) is cut into the fewest bands of consecutive columns, their sizes differing by one at most (7
columns: 4 and 3; 9: 3, 3 and 3), one below the other, each starting at the left margin. A wire between bands runs
in the channel below the upper band: out of its port into the gap beside the block, along the channel, and down
(or up) the gap beside the other block to its port, so it crosses no block (vertical runs stay in the gaps between
columns, horizontal ones in the channels between bands).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from mechfmu.drawing.ports import BODY, Block, Port

BLOCK_WIDTH, COLUMN_GAP, ROW_GAP, HEADER, PORT_PITCH, LANE = 170.0, 110.0, 46.0, 34.0, 22.0, 9.0
#: the widest a diagram gets [px], and the margin right of its rightmost blocks [px]
MAX_WIDTH, RIGHT_MARGIN = 1200.0, 70.0


@dataclass
class Bundle:
    """The connections between two ports (a flange's s and v one way and f back, a vector's axes), one wire."""
    ends: tuple[tuple[str, str], tuple[str, str]]  # (block, port) twice
    connections: list = field(default_factory=list)
    route: list[tuple[float, float]] = field(default_factory=list)


def bundles(scenario) -> list[Bundle]:
    """The scenario's connections grouped by the pair of ports they join, in SSD order."""
    from mechfmu.drawing.ports import port_name
    found: dict[frozenset, Bundle] = {}
    for c in scenario.connections:
        a, b = (c.source, port_name(c.source_variable)), (c.target, port_name(c.target_variable))
        found.setdefault(frozenset((a, b)), Bundle((a, b))).connections.append(c)
    return list(found.values())


def _vote(block: Block, port: Port) -> int:
    """+1: the neighbour goes right of ``block``, -1 left, 0 no preference; a body's vote counts twice."""
    side = {"right": 1, "left": -1}.get(port.nominal, 0)
    return side * (2 if block.category == BODY else 1)


def _columns(blocks: dict[str, Block], wires: list[Bundle]) -> None:
    names = list(blocks)
    after: dict[str, set[str]] = {n: set() for n in names}  # a -> blocks right of a
    neighbours: dict[str, list[str]] = {n: [] for n in names}
    for w in wires:
        (a, pa), (b, pb) = w.ends
        if a == b:
            continue
        neighbours[a].append(b)
        neighbours[b].append(a)
        vote = _vote(blocks[a], blocks[a].ports[pa]) - _vote(blocks[b], blocks[b].ports[pb])
        if vote:
            left, right = (a, b) if vote > 0 else (b, a)
            if not _reaches(after, right, left):  # an order against the others' is dropped
                after[left].add(right)
    placed: dict[str, int] = {}

    def place(name: str) -> int:
        if name not in placed:
            placed[name] = 0
            before = [n for n in names if name in after[n]]
            placed[name] = max((place(n) + 1 for n in before), default=0)
        return placed[name]
    ordered = [n for n in names if any(n in after[m] or after[n] for m in names)]
    for name in ordered:
        place(name)
    for name in names:  # blocks without an order: next to a placed neighbour
        if name not in placed:
            near = next((placed[n] for n in neighbours[name] if n in placed), -1)
            placed[name] = near + 1
    for name in names:
        blocks[name].column = placed[name]


def _reaches(after: dict[str, set[str]], start: str, goal: str) -> bool:
    seen, todo = set(), [start]
    while todo:
        node = todo.pop()
        if node == goal:
            return True
        if node not in seen:
            seen.add(node)
            todo.extend(after[node])
    return False


def _groups(blocks: dict[str, Block], wires: list[Bundle]) -> list[list[str]]:
    """The connected subsystems, each in SSD order, ordered by their first block."""
    group = {n: n for n in blocks}

    def root(n: str) -> str:
        while group[n] != n:
            n = group[n]
        return n
    for w in wires:
        group[root(w.ends[0][0])] = root(w.ends[1][0])
    found: dict[str, list[str]] = {}
    for n in blocks:
        found.setdefault(root(n), []).append(n)
    return list(found.values())


def _sides(blocks: dict[str, Block], wires: list[Bundle]) -> None:
    """Each port faces the mean column of the blocks it is wired to; its nominal side (else right) breaks ties."""
    peers: dict[tuple[str, str], list[int]] = {}
    for w in wires:
        for (a, pa), (b, _) in (w.ends, w.ends[::-1]):
            peers.setdefault((a, pa), []).append(blocks[b].column)
    for block in blocks.values():
        for port in block.ports.values():
            columns = peers.get((block.name, port.name), [])
            lean = sum(columns) / len(columns) - block.column if columns else 0.0
            port.side = "right" if lean > 0 else "left" if lean < 0 else port.nominal or "right"
        on_side = [sum(p.side == s for p in block.ports.values()) for s in ("left", "right")]
        block.width, block.height = BLOCK_WIDTH, HEADER + max(1, *on_side) * PORT_PITCH + 8


def _rows(blocks: dict[str, Block], group: list[str], neighbours: dict[str, list[str]]) -> None:
    """Rows in each column: the free row nearest the mean row of the neighbours placed before."""
    by_column: dict[int, list[str]] = {}
    for n in group:
        by_column.setdefault(blocks[n].column, []).append(n)
    done: set[str] = set()
    for column in sorted(by_column):
        wanted: list[tuple[float, int, str]] = []
        for n in by_column[column]:
            rows = [blocks[m].row for m in neighbours[n] if m in done]
            wanted.append((sum(rows) / len(rows) if rows else len(wanted), len(wanted), n))
        taken: set[int] = set()
        for target, _, n in sorted(wanted):
            row = min((r for r in range(len(group) + 1) if r not in taken), key=lambda r: (abs(r - target), r))
            taken.add(row)
            blocks[n].row = row
        done.update(by_column[column])


def columns_per_band(left: float = 20.0, max_width: float = MAX_WIDTH) -> int:
    """The most columns a band holds: ``left + n*BLOCK_WIDTH + (n-1)*COLUMN_GAP + RIGHT_MARGIN <= max_width``
    (at least one)."""
    return max(1, int((max_width - left - RIGHT_MARGIN + COLUMN_GAP) // (BLOCK_WIDTH + COLUMN_GAP)))


def layout(blocks: dict[str, Block], wires: list[Bundle], top: float = 0.0, left: float = 20.0,
           max_width: float = MAX_WIDTH) -> float:
    """Place blocks and ports and route the wires below ``top``, each subsystem's columns wrapped into bands no
    wider than ``max_width`` (module docstring); returns the bottom of the diagram."""
    _columns(blocks, wires)
    _sides(blocks, wires)
    neighbours: dict[str, list[str]] = {n: [] for n in blocks}
    for w in wires:
        neighbours[w.ends[0][0]].append(w.ends[1][0])
        neighbours[w.ends[1][0]].append(w.ends[0][0])
    fit = columns_per_band(left, max_width)
    y = top
    for group in _groups(blocks, wires):
        first = min(blocks[n].column for n in group)
        _rows(blocks, group, neighbours)
        for n in group:
            blocks[n].column -= first
        span = max(blocks[n].column for n in group) + 1
        count = -(-span // fit)  # bands: column c in band c*count//span, so each holds floor or ceil(span/count)
        band = {n: blocks[n].column * count // span for n in group}
        starts = [-(-b * span // count) for b in range(count)]  # each band's first column
        inside = [w for w in wires if w.ends[0][0] in group]
        members = {n: blocks[n] for n in group}
        lanes = [0] * count
        for _ in range(2):  # the first pass counts each band's channel lanes, the second routes
            channels = _place_bands(members, band, starts, y, lanes, left)
            _place_ports(members, inside)
            lanes = [0] * len(lanes)
            for w in inside:
                w.route = _route(blocks, w, band, channels, lanes)
        y = channels[-1] + lanes[-1] * LANE + ROW_GAP * 2 / 3
    return y - ROW_GAP / 2


def _place_bands(blocks: dict[str, Block], band: dict[str, int], starts: list[int], top: float, lanes: list[int],
                 left: float) -> list[float]:
    """Blocks at their band's column and row, each band below the previous one and its ``lanes`` channel lanes;
    returns the top of each band's channel."""
    height = max(b.height for b in blocks.values()) + ROW_GAP
    channels = []
    for index, count in enumerate(lanes):
        rows = sorted({b.row for n, b in blocks.items() if band[n] == index}) or [0.0]
        for n, b in blocks.items():
            if band[n] == index:
                b.x = left + (b.column - starts[index]) * (BLOCK_WIDTH + COLUMN_GAP)
                b.y = top + rows.index(b.row) * height + (height - ROW_GAP - b.height) / 2
        bottom = top + len(rows) * height - ROW_GAP
        channels.append(bottom + ROW_GAP / 3)
        top = bottom + count * LANE + ROW_GAP
    return channels


def _place_ports(blocks: dict[str, Block], wires: list[Bundle]) -> None:
    """Ports on each side, ordered by the height of what they are wired to, evenly spaced."""
    peer_y: dict[tuple[str, str], list[float]] = {}
    for w in wires:
        for (a, pa), (b, _) in (w.ends, w.ends[::-1]):
            peer_y.setdefault((a, pa), []).append(blocks[b].y + blocks[b].height / 2)
    for block in blocks.values():
        for side in ("left", "right"):
            ports = [p for p in block.ports.values() if p.side == side]
            ports.sort(key=lambda p: sum(peer_y.get((block.name, p.name), [0.0]))
                       / len(peer_y.get((block.name, p.name), [0.0])))
            body = block.height - HEADER
            for i, port in enumerate(ports):
                port.x = block.x + (block.width if side == "right" else 0.0)
                port.y = block.y + HEADER + (body - len(ports) * PORT_PITCH) / 2 + (i + 0.5) * PORT_PITCH


def _crossed(blocks: dict[str, Block], x0: float, x1: float, y0: float, y1: float, ends: set[str]) -> bool:
    low, high = min(x0, x1), max(x0, x1)
    return any(low < b.x + b.width / 2 < high and b.y < max(y0, y1) + 10 and b.y + b.height > min(y0, y1) - 10
               for b in blocks.values() if b.name not in ends)


def _route(blocks: dict[str, Block], wire: Bundle, band: dict[str, int], channels: list[float],
           lanes: list[int]) -> list[tuple[float, float]]:
    """The wire from its first port to its second: four points of a cubic curve (ports of one band that face each
    other with no block between), or the corners of a line through the channel below the upper end's band (five
    or more points; its vertical runs 12 to 18 px off the ports, in the gaps between columns)."""
    (a, pa), (b, pb) = wire.ends
    p, q = blocks[a].ports[pa], blocks[b].ports[pb]
    out_p, out_q = (1 if p.side == "right" else -1), (1 if q.side == "right" else -1)
    facing = out_p * (q.x - p.x) > 0 and out_q * (p.x - q.x) > 0
    if band[a] == band[b]:
        if facing and not _crossed(blocks, p.x, q.x, p.y, q.y, {a, b}):
            reach = abs(q.x - p.x) / 2
            return [(p.x, p.y), (p.x + out_p * reach, p.y), (q.x + out_q * reach, q.y), (q.x, q.y)]
        if out_p == out_q and abs(p.x - q.x) < 1 and not _crossed(blocks, p.x, p.x + out_p * 60, p.y, q.y, {a, b}):
            return [(p.x, p.y), (p.x + out_p * 50, p.y), (q.x + out_q * 50, q.y), (q.x, q.y)]
    gap = min(band[a], band[b])
    channel = channels[gap] + lanes[gap] * LANE
    off = 12 + 3 * (lanes[gap] % 3)
    lanes[gap] += 1
    xp, xq = p.x + out_p * off, q.x + out_q * off
    return [(p.x, p.y), (xp, p.y), (xp, channel), (xq, channel), (xq, q.y), (q.x, q.y)]


def path_data(points: list[tuple[float, float]]) -> str:
    """SVG path data of a route (``_route``): a cubic curve for four points, else straight segments."""
    text = [f"{x:.1f},{y:.1f}" for x, y in points]
    return f"M{text[0]} C{' '.join(text[1:])}" if len(points) == 4 else f"M{text[0]} L{' '.join(text[1:])}"
