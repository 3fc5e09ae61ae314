DROP TABLE IF EXISTS run_scripts;
DROP TABLE IF EXISTS run_script_snapshots;
