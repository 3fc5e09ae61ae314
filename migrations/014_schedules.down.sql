DROP TABLE IF EXISTS schedule_firings;
DROP TABLE IF EXISTS schedules;
