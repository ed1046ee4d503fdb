"""What people see: reporters, the summary table, the status view, the plan."""
