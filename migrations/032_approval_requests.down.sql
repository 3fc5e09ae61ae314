DROP TABLE approval_requests;
