"""Exudyn test rig shared by the reference tests: two free coordinates at a given state."""
import exudyn as exu
from exudyn.itemInterface import MarkerNodeCoordinate, Mass1D, Node1D


def two_coordinates(q0: float, q1: float, v0: float, v1: float):
    """A new system with two Node1D (reference 0, so coordinate = displacement) at (q0, v0), (q1, v1),
    a 1 kg Mass1D on each and a coordinate marker on each; returns (container, mbs, [marker0, marker1])."""
    sc = exu.SystemContainer()
    mbs = sc.AddSystem()
    nodes = [mbs.AddNode(Node1D(referenceCoordinates=[0], initialCoordinates=[q], initialVelocities=[v]))
             for q, v in ((q0, v0), (q1, v1))]
    for n in nodes:
        mbs.AddObject(Mass1D(nodeNumber=n, mass=1.0))
    return sc, mbs, [mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=n, coordinate=0)) for n in nodes]
