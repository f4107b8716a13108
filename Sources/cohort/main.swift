print("cohort")
