DROP TRIGGER budget_limits_forget_use ON budget_limits;
DROP FUNCTION budget_use_forget();
DROP TRIGGER model_turns_budget_use ON model_turns;
DROP FUNCTION budget_use_turn();
DROP TRIGGER audit_events_budget_use_delete ON audit_events;
DROP TRIGGER audit_events_budget_use_insert ON audit_events;
DROP FUNCTION budget_use_call();
DROP FUNCTION budget_use_add(uuid, uuid, uuid, date, text, bigint, bigint, numeric);
DROP TABLE budget_use;
