"""legal's writes: each public service is one durable transaction with its audit entry."""
