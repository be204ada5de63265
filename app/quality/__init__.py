"""Motion quality: the limits a motion is judged against (limits) and one rollout's report (motion_report)."""
