DROP TABLE IF EXISTS model_turns;
DROP TABLE IF EXISTS model_prices;
