"""Measuring a subject against its floor on a busy machine: the two alternate, pair after pair, so
a neighbour's load falls on both sides alike, and what is reported is the median and the range of
N pairs, with the load average beside each run."""
import os
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class Pairs:
    label: str
    floors: list[float] = field(default_factory=list)
    subjects: list[float] = field(default_factory=list)
    loads: list[float] = field(default_factory=list)

    @property
    def ratios(self) -> list[float]:
        return [subject / floor for floor, subject in zip(self.floors, self.subjects, strict=True)]


def load_average() -> float:
    return os.getloadavg()[0]


def interleave(label: str, pairs: int, floor: Callable[[], float], subject: Callable[[], float]) -> Pairs:
    """Run floor, subject, floor, subject, ... `pairs` times; each callable returns its figure
    (seconds, or seconds per request)."""
    result = Pairs(label)
    for _ in range(pairs):
        result.loads.append(load_average())
        result.floors.append(floor())
        result.subjects.append(subject())
    return result


def spread(values: list[float], fmt: str = "{:.2f}") -> str:
    """median [min-max]"""
    return f"{fmt.format(statistics.median(values))} [{fmt.format(min(values))}-{fmt.format(max(values))}]"


def print_pairs(result: Pairs, *, unit: str = "s", fmt: str = "{:.2f}", target: str = "") -> None:
    print(
        f"{result.label}: floor {spread(result.floors, fmt)}{unit}, subject {spread(result.subjects, fmt)}{unit}, "
        f"ratio {spread(result.ratios)}x over {len(result.ratios)} pairs"
        f" (load {min(result.loads):.1f}-{max(result.loads):.1f}){'  target ' + target if target else ''}"
    )
    print("  pairs: " + ", ".join(
        f"{fmt.format(f)}/{fmt.format(s)} @{load:.1f}"
        for f, s, load in zip(result.floors, result.subjects, result.loads, strict=True)
    ))
