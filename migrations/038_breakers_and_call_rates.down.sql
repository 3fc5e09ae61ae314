DROP TABLE organisation_call_rates;
DROP TABLE login_breakers;
