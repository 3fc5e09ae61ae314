DROP TRIGGER IF EXISTS group_messages_notify ON group_messages;
DROP FUNCTION IF EXISTS notify_group_chat();
DROP TABLE IF EXISTS group_deliveries;
DROP TABLE IF EXISTS group_routes;
DROP TABLE IF EXISTS group_responders;
DROP TABLE IF EXISTS group_messages;
DROP TABLE IF EXISTS group_chat_heads;
