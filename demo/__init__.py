"""Demo data: a fictional case told from intake to an approved testimony (``seed_demo``).

The top of the project: it uses the services of every app and nothing imports it."""
