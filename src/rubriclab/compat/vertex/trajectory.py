"""``TrajectorySingleToolUse(tool_name=...)``: Vertex's one trajectory metric that takes an
argument, as an object (the other trajectory and tool-call metrics are given by name)."""

from __future__ import annotations

from ...metrics.trajectory import TrajectoryMetric, trajectory_single_tool_use

__all__ = ["TrajectorySingleToolUse"]


class TrajectorySingleToolUse(TrajectoryMetric):
    """1 if ``predicted_trajectory`` calls ``tool_name`` at least once; no reference, no judge."""

    tool_name: str

    def __init__(self, tool_name: str) -> None:
        base = trajectory_single_tool_use(tool_name)
        super().__init__(
            base.name,
            base.compute,
            predicted_column=base.predicted_column,
            description=base.description,
            needs_reference=False,
        )
        object.__setattr__(self, "tool_name", tool_name)

    @property
    def metric_name(self) -> str:
        """Vertex's name for the metric (its columns are ``trajectory_single_tool_use/...``)."""
        return self.name
