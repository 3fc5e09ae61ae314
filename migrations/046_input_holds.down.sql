DROP TABLE IF EXISTS input_holds;
