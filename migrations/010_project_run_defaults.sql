-- A project's starting values for the Configure form (JSON): the Demo project's tiny model needs its own.
ALTER TABLE projects ADD COLUMN run_defaults TEXT;
